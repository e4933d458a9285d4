/** GET /v1/approvals (the tenant's pending asks) and POST /v1/approvals/:id {decision}. */
import { Type } from "typebox";
import { InvalidArgumentError } from "../../../errors.js";
import { principalOf, type RoutePlugin } from "../route-context.js";
import { APPROVAL_DECISIONS, ApprovalDecisionBodySchema, ApprovalSchema, ErrorSchema } from "../schemas.js";

/** The approval routes (a plugin). Another tenant's approval is a 404. */
export const approvalRoutes: RoutePlugin = async (app, { ctx }) => {
  app.get(
    "/v1/approvals",
    { schema: { response: { 200: Type.Object({ approvals: Type.Array(ApprovalSchema) }) } } },
    async (request) => {
      const { tenant } = principalOf(request);
      return { approvals: ctx.approvals.list(tenant.id) };
    },
  );

  app.post(
    "/v1/approvals/:id",
    {
      schema: {
        params: Type.Object({ id: Type.String({ minLength: 1, maxLength: 128 }) }),
        body: ApprovalDecisionBodySchema,
        response: { 200: Type.Object({ id: Type.String(), decision: Type.String() }), 404: ErrorSchema },
      },
    },
    async (request) => {
      const { tenant, keyId } = principalOf(request);
      const { decision } = request.body;
      if (!(APPROVAL_DECISIONS as readonly string[]).includes(decision))
        throw new InvalidArgumentError(
          `decision must be one of ${APPROVAL_DECISIONS.join(", ")}; got ${JSON.stringify(decision)}.`,
        );
      ctx.approvals.decide(
        tenant.id,
        request.params.id,
        decision as (typeof APPROVAL_DECISIONS)[number],
        keyId,
      );
      return { id: request.params.id, decision };
    },
  );
};

/** TypeBox request and response schemas of the HTTP API (also its documentation). */
import { Type } from "typebox";

/** `{code, message}`: every error response. */
export const ErrorSchema = Type.Object({ code: Type.String(), message: Type.String() });

export const LimitsSchema = Type.Object(
  {
    cpus: Type.Optional(Type.Number({ exclusiveMinimum: 0 })),
    memoryBytes: Type.Optional(Type.Integer({ minimum: 6 * 1024 * 1024 })),
    workspaceBytes: Type.Optional(Type.Integer({ minimum: 1 })),
    pids: Type.Optional(Type.Integer({ minimum: 1, maximum: 4096 })),
    tmpBytes: Type.Optional(Type.Integer({ minimum: 1 })),
  },
  { additionalProperties: false },
);

export const ToolSelectionSchema = Type.Object(
  {
    tools: Type.Optional(Type.Array(Type.String())),
    excludeTools: Type.Optional(Type.Array(Type.String())),
    noTools: Type.Optional(Type.Boolean()),
    noBuiltinTools: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
);

const WorkspaceModeSchema = Type.Union([Type.Literal("copy"), Type.Literal("ro"), Type.Literal("rw")]);

/** JSON body of POST /v1/sessions. */
export const CreateSessionBodySchema = Type.Object(
  {
    image: Type.Optional(Type.String({ minLength: 1 })),
    workspaceMode: Type.Optional(WorkspaceModeSchema),
    workspacePath: Type.Optional(Type.String({ minLength: 1 })),
    limits: Type.Optional(LimitsSchema),
    tools: Type.Optional(ToolSelectionSchema),
  },
  { additionalProperties: false },
);

/** Query string of POST /v1/sessions with a tar body (limits as flat fields). */
export const CreateSessionQuerySchema = Type.Object(
  {
    image: Type.Optional(Type.String({ minLength: 1 })),
    workspaceMode: Type.Optional(WorkspaceModeSchema),
    cpus: Type.Optional(Type.Number({ exclusiveMinimum: 0 })),
    memoryBytes: Type.Optional(Type.Integer({ minimum: 6 * 1024 * 1024 })),
    workspaceBytes: Type.Optional(Type.Integer({ minimum: 1 })),
    tools: Type.Optional(Type.String({ description: "Comma-separated allowlist" })),
  },
  { additionalProperties: false },
);

/** A session as the API shows it. */
export const SessionSchema = Type.Object({
  id: Type.String(),
  tenant: Type.String(),
  /** The Docker container id (a pooled container keeps its `pool-…` session label). */
  containerId: Type.String(),
  image: Type.String(),
  workspaceMode: WorkspaceModeSchema,
  limits: LimitsSchema,
  enabledTools: Type.Array(Type.String()),
  createdAt: Type.String(),
  expiresAt: Type.String(),
  lastActiveAt: Type.String(),
  runningBatches: Type.Integer(),
});

export const SessionParamsSchema = Type.Object({ id: Type.String({ minLength: 1, maxLength: 128 }) });

/**
 * Body of POST /v1/sessions/:id/tool-calls: one assistant message's calls. Ids must be unique within
 * the batch: a repeated id is answered 400 INVALID_ARGUMENT naming it, and no call runs
 * (DuplicateToolCallIdError, checked by the route: JSON Schema cannot say it of one field).
 */
export const ToolCallsBodySchema = Type.Object(
  {
    toolCalls: Type.Array(
      Type.Object({
        id: Type.String({ minLength: 1, description: "Unique within the batch" }),
        name: Type.String({ minLength: 1 }),
        arguments: Type.Unknown(),
      }),
      { minItems: 1, maxItems: 64 },
    ),
  },
  { additionalProperties: false },
);

export const ContentSchema = Type.Union([
  Type.Object({ type: Type.Literal("text"), text: Type.String() }),
  Type.Object({ type: Type.Literal("image"), data: Type.String(), mimeType: Type.String() }),
]);

/** One ToolResultMessage (Pi's shape). */
export const ToolResultSchema = Type.Object({
  role: Type.Literal("toolResult"),
  toolCallId: Type.String(),
  toolName: Type.String(),
  content: Type.Array(ContentSchema),
  details: Type.Optional(Type.Unknown()),
  isError: Type.Boolean(),
  timestamp: Type.Number(),
});

export const ToolCallsResponseSchema = Type.Object({ results: Type.Array(ToolResultSchema) });

export const ApprovalSchema = Type.Object({
  id: Type.String(),
  sessionId: Type.String(),
  toolCallId: Type.Optional(Type.String()),
  tool: Type.String(),
  args: Type.Unknown(),
  decision: Type.String(),
  rule: Type.Optional(Type.String()),
  reason: Type.Optional(Type.String()),
  part: Type.Optional(Type.String()),
  createdAt: Type.String(),
});

/** The decisions POST /v1/approvals/:id takes. */
export const APPROVAL_DECISIONS = ["allow", "allow-once", "allow-session", "deny"] as const;

/**
 * `allow` (= `allow-once`), `allow-once`, `allow-session` (same parts, rest of the session) or `deny`.
 * Checked by the route (one error naming the allowed values), not by a schema union (which reports
 * one "must be equal to constant" per alternative).
 */
export const ApprovalDecisionBodySchema = Type.Object(
  { decision: Type.String({ maxLength: 64, description: APPROVAL_DECISIONS.join(" | ") }) },
  { additionalProperties: false },
);

export const ToolsQuerySchema = Type.Object({ session: Type.String({ minLength: 1, maxLength: 128 }) });

/**
 * GET /v1/sessions/:id/workspace (tar export, at most WORKSPACE_DOWNLOAD_MAX_BYTES of apparent
 * file sizes, else 413: workspace-download.ts) and GET /v1/sessions/:id/changes (unified patch, the
 * review's renderer, of what `warden apply` accepts (review/apply-rule.ts; the rest named in
 * leading `warden-left-out:` lines): host side read without following links; a large patch rendered off the event
 * loop; files over HASH_MAX_FILE_BYTES compared by size and mtime, never hashed whole). Each holds
 * one of its tenant's maxConcurrentWorkspaceReads slots until its response is over (sent or the
 * client gone), so one tenant's parallel requests cannot fill the server's memory or the engine.
 */
import { collectChanges, formatPatchBytes, splitApplicable } from "../../../review/index.js";
import type { TenantConfig } from "../../config/index.js";
import type { TenantQuotas } from "../../tenancy/index.js";
import { abortOnDisconnect } from "../abort-on-disconnect.js";
import { onResponseOver, type ResponseLike } from "../response-over.js";
import { principalOf, type RoutePlugin } from "../route-context.js";
import { ErrorSchema, SessionParamsSchema } from "../schemas.js";
import { checkWorkspaceDownload, cutAfter, WORKSPACE_DOWNLOAD_MAX_BYTES } from "../workspace-download.js";

/**
 * The prefix of a /changes line naming a change left out of the patch, one per change, before the
 * first `diff --git`: `warden-left-out: {"path":"out","reason":"symlink not applied"}`.
 */
const LEFT_OUT_PREFIX = "warden-left-out: ";

/** Files larger than this (either side, bytes) show as "Binary files … differ" in /changes (1 MiB). */
const CHANGES_MAX_FILE_BYTES = 1024 * 1024;

/**
 * Bytes one /changes reads in all (both sides of every file, 32 MiB): later files show as
 * "Binary files … differ". Without it one review held the whole changed workspace in memory.
 */
const CHANGES_MAX_TOTAL_BYTES = 32 * 1024 * 1024;

/**
 * Takes a workspace-read slot of `tenant` (429 when none is free), held until the response `raw`
 * is over (response-over.ts): a response already destroyed (the client left during the hooks before
 * the handler) or queued behind a pipelined one whose socket closed gives the slot back.
 */
export function holdReadSlot(
  quotas: Pick<TenantQuotas, "reserveWorkspaceRead">,
  tenant: TenantConfig,
  raw: ResponseLike,
): void {
  onResponseOver(raw, quotas.reserveWorkspaceRead(tenant));
}

/** The workspace routes (a plugin); both abort their engine reads when the client disconnects. */
export const workspaceRoutes: RoutePlugin = async (app, { ctx }) => {
  app.get(
    "/v1/sessions/:id/workspace",
    {
      schema: {
        params: SessionParamsSchema,
        // 413: over WORKSPACE_DOWNLOAD_MAX_BYTES; 429: no workspace-read slot free.
        response: { 404: ErrorSchema, 413: ErrorSchema, 429: ErrorSchema },
      },
    },
    async (request, reply) => {
      const { tenant } = principalOf(request);
      const live = ctx.registry.get(tenant.id, request.params.id);
      holdReadSlot(ctx.quotas, tenant, reply.raw);
      const controller = abortOnDisconnect(reply);
      const { sandbox } = live.session;
      await checkWorkspaceDownload(sandbox, WORKSPACE_DOWNLOAD_MAX_BYTES, controller.signal);
      const archive = await sandbox.exportWorkspace({ signal: controller.signal });
      const stream = cutAfter(archive, 2 * WORKSPACE_DOWNLOAD_MAX_BYTES);
      reply.header("content-disposition", `attachment; filename="${live.record.id}.tar"`);
      return reply.type("application/x-tar").send(stream as never);
    },
  );

  app.get("/v1/sessions/:id/changes", { schema: { params: SessionParamsSchema } }, async (request, reply) => {
    const { tenant } = principalOf(request);
    const live = ctx.registry.get(tenant.id, request.params.id);
    holdReadSlot(ctx.quotas, tenant, reply.raw);
    const controller = abortOnDisconnect(reply);
    const hostRoot = live.record.workspaceMode === "copy" ? live.record.workspaceHostPath : undefined;
    const { signal } = controller;
    const changes = await collectChanges(live.session.sandbox, hostRoot, {
      signal,
      maxFileBytes: CHANGES_MAX_FILE_BYTES,
      maxTotalBytes: CHANGES_MAX_TOTAL_BYTES,
      oversize: "mark",
    });
    // What `warden apply` would refuse (a link the sandbox made, a .git path, a special file) is
    // left out, so `git apply` of the answer cannot make it either: each is named in a line before
    // the first `diff --git`, where git apply, like every patch reader, skips text. A file too large
    // to show stays, as "Binary files … differ".
    const { applicable, refused } = splitApplicable(changes, { keepOversize: true });
    const leftOut = refused.map((entry) => `${LEFT_OUT_PREFIX}${JSON.stringify(entry)}\n`).join("");
    // Rendered and encoded off the event loop for a large change (review/patch-bytes.ts).
    const patch = await formatPatchBytes(applicable, { signal });
    return reply.type("text/x-diff; charset=utf-8").send(Buffer.concat([Buffer.from(leftOut), patch]));
  });
};

/** TypeBox request and response schemas of the HTTP API (also its documentation). */
import { Type } from "typebox";
import { MAX_TOOL_CALL_ID_CHARS, MAX_TOOL_NAME_CHARS } from "../../pipeline/index.js";

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
    env: Type.Optional(
      Type.Record(Type.String(), Type.String(), {
        description: "Non-secret environment variables every command sees (names [A-Za-z_][A-Za-z0-9_]*)",
      }),
    ),
    network: Type.Optional(
      Type.Object(
        {
          allow: Type.Array(Type.String({ minLength: 1, maxLength: 260 }), {
            maxItems: 64,
            description: "host[:port[+port]] entries within the tenant's network allowlist",
          }),
        },
        {
          additionalProperties: false,
          description: "Egress through the session's gateway (docs/network.md)",
        },
      ),
    ),
    secrets: Type.Optional(
      Type.Array(
        Type.Object(
          {
            name: Type.String({ minLength: 1, maxLength: 64, description: "A secret of the tenant's store" }),
            env: Type.Optional(
              Type.Union([Type.String({ pattern: "^[A-Za-z_][A-Za-z0-9_]{0,127}$" }), Type.Literal(false)], {
                description: "Variable holding the placeholder {{NAME}}; default the name; false: none",
              }),
            ),
            file: Type.Optional(
              Type.String({
                pattern: "^/",
                maxLength: 4096,
                description: "Absolute sandbox path of a file holding the placeholder",
              }),
            ),
          },
          { additionalProperties: false },
        ),
        {
          maxItems: 32,
          description:
            "Secrets of the tenant's store the session may use through its gateway (needs network.allow); the sandbox sees only placeholders",
        },
      ),
    ),
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
 * Longest tool-call id and tool name the server takes, in characters: the bounds every way a call
 * comes in shares (src/pipeline/call-fields.ts, also MCP's tools/call). The id is written in the
 * call's audit line, its in-flight journal entry, approvals and events: unbounded, one call's id made
 * a megabyte audit line (red team).
 */
export { MAX_TOOL_CALL_ID_CHARS, MAX_TOOL_NAME_CHARS };

/**
 * Body of POST /v1/sessions/:id/tool-calls: one assistant message's calls. Ids must be unique within
 * the batch: a repeated id is answered 400 INVALID_ARGUMENT naming it, and no call runs
 * (DuplicateToolCallIdError, checked by the route: JSON Schema cannot say it of one field). An id
 * over MAX_TOOL_CALL_ID_CHARS or a name over MAX_TOOL_NAME_CHARS is a 400 naming the field.
 */
export const ToolCallsBodySchema = Type.Object(
  {
    toolCalls: Type.Array(
      Type.Object({
        id: Type.String({
          minLength: 1,
          maxLength: MAX_TOOL_CALL_ID_CHARS,
          description: "Unique within the batch",
        }),
        name: Type.String({ minLength: 1, maxLength: MAX_TOOL_NAME_CHARS }),
        arguments: Type.Unknown(),
      }),
      { minItems: 1, maxItems: 64 },
    ),
  },
  { additionalProperties: false },
);

const ContentSchema = Type.Union([
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
  network: Type.Optional(
    Type.Object(
      { host: Type.String(), port: Type.Integer(), rule: Type.String() },
      { description: "Set for a network connection under an `ask` rule (tool `network`)" },
    ),
  ),
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

/** Query of GET/PUT /v1/sessions/:id/files: a workspace path (relative to /workspace, or absolute under it). */
export const FilesQuerySchema = Type.Object(
  { path: Type.String({ minLength: 1, maxLength: 4096 }) },
  { additionalProperties: false },
);

/** Answer of PUT /v1/sessions/:id/files: the canonical container path and the bytes written. */
export const FileWrittenSchema = Type.Object({ path: Type.String(), bytes: Type.Integer() });

/** Where a secret may be sent (src/secrets SecretBinding); the route checks each entry's form. */
const SecretBindingSchema = Type.Object(
  {
    hosts: Type.Array(Type.String({ minLength: 1, maxLength: 260 }), {
      minItems: 1,
      maxItems: 32,
      description: "Host patterns as network rules write them, without a port: api.github.com, *.example.org",
    }),
    ports: Type.Optional(
      Type.Array(Type.Integer({ minimum: 1, maximum: 65535 }), {
        maxItems: 16,
        description: "Default [443]",
      }),
    ),
    methods: Type.Optional(
      Type.Array(Type.String({ minLength: 1, maxLength: 32 }), {
        maxItems: 16,
        description: "Upper-case HTTP methods; default any",
      }),
    ),
    pathPrefixes: Type.Optional(
      Type.Array(Type.String({ minLength: 1, maxLength: 1024 }), {
        maxItems: 32,
        description: "Path prefixes starting with /; default any",
      }),
    ),
    headers: Type.Optional(
      Type.Array(Type.String({ minLength: 1, maxLength: 64 }), {
        maxItems: 16,
        description:
          "Lower-case header names whose placeholder is replaced; default [authorization]; never host, content-length or a hop-by-hop header",
      }),
    ),
  },
  { additionalProperties: false },
);

/**
 * Body of PUT /v1/secrets/:name. `value` is checked by the route (1 to 8192 characters of visible
 * ASCII or space, without `"` or `\`), whose 400 says what is wrong without repeating it.
 */
export const PutSecretBodySchema = Type.Object(
  {
    value: Type.String({
      description:
        'The secret: 1 to 8192 characters of visible ASCII (0x21-0x7e) or space, without " or \\. Never returned by any route',
    }),
    bindings: Type.Array(SecretBindingSchema, { minItems: 1, maxItems: 16 }),
  },
  { additionalProperties: false },
);

/** A secret as the API shows it: never its value. */
export const SecretSchema = Type.Object({
  name: Type.String(),
  version: Type.Integer({ description: "1 when created, +1 at each PUT" }),
  bindings: Type.Array(SecretBindingSchema),
  updatedAt: Type.String(),
});

/** `:name` of /v1/secrets/:name (checked against [A-Z][A-Z0-9_]{0,63} by the route). */
export const SecretParamsSchema = Type.Object({ name: Type.String({ minLength: 1, maxLength: 64 }) });

export * from "./process-schemas.js";

/**
 * TypeBox schemas of the background-process routes (routes/processes.ts; the model in
 * src/process/types.ts), re-exported by schemas.ts with the API's other schemas.
 */
import { Type } from "typebox";
import { PROCESS_SIGNALS } from "../../process/index.js";

const TerminalSizeSchema = Type.Object(
  {
    cols: Type.Integer({ minimum: 1, maximum: 1000 }),
    rows: Type.Integer({ minimum: 1, maximum: 1000 }),
  },
  { additionalProperties: false },
);

/** Body of POST /v1/sessions/:id/processes. */
export const StartProcessBodySchema = Type.Object(
  {
    command: Type.Union(
      [
        Type.String({ minLength: 1, description: "A script run with bash -c" }),
        Type.Object({ argv: Type.Array(Type.String(), { minItems: 1 }) }, { additionalProperties: false }),
      ],
      { description: "A script (string) or {argv}: what the process runs" },
    ),
    cwd: Type.Optional(Type.String({ minLength: 1, description: "Working directory (default /workspace)" })),
    env: Type.Optional(Type.Record(Type.String(), Type.String())),
    pty: Type.Optional(TerminalSizeSchema),
  },
  { additionalProperties: false },
);

/** A background process as the API shows it (ProcessInfo; times ISO-8601). */
export const ProcessSchema = Type.Object({
  id: Type.String(),
  commandLine: Type.String(),
  pty: Type.Boolean(),
  state: Type.Union([Type.Literal("running"), Type.Literal("exited")]),
  exitCode: Type.Optional(Type.Integer()),
  exitSignal: Type.Optional(Type.Integer()),
  startedAt: Type.String(),
  endedAt: Type.Optional(Type.String()),
  outputBytes: Type.Integer({ description: "The output stream's length so far" }),
  keptFrom: Type.Integer({ description: "The first offset still kept; earlier output was dropped" }),
  droppedBytes: Type.Integer({ description: "Output that could not be kept at all (/tmp full)" }),
});

export const ProcessListSchema = Type.Object({ processes: Type.Array(ProcessSchema) });

export const ProcessParamsSchema = Type.Object({
  id: Type.String({ minLength: 1, maxLength: 128 }),
  pid: Type.String({ pattern: "^p[1-9][0-9]{0,8}$" }),
});

/** Query of GET …/output. */
export const ProcessOutputQuerySchema = Type.Object(
  {
    offset: Type.Optional(
      Type.Integer({ minimum: 0, description: "Stream offset to read from (default 0)" }),
    ),
    maxBytes: Type.Optional(
      Type.Integer({ minimum: 1, maximum: 16 * 1024 * 1024, description: "Default 65536" }),
    ),
  },
  { additionalProperties: false },
);

/** Answer of GET …/output: the bytes in base64, where they start, and where to read next. */
export const ProcessOutputSchema = Type.Object({
  offset: Type.Integer(),
  nextOffset: Type.Integer(),
  skipped: Type.Integer({ description: "Bytes asked for that are no longer kept" }),
  data: Type.String({ description: "The bytes, base64" }),
  process: ProcessSchema,
});

/** Body of POST …/input: text (UTF-8) or bytes (base64), then optionally the end of input. */
export const ProcessInputBodySchema = Type.Object(
  {
    text: Type.Optional(Type.String()),
    base64: Type.Optional(Type.String()),
    close: Type.Optional(Type.Boolean({ description: "Close stdin after the data (a terminal gets ^D)" })),
  },
  { additionalProperties: false },
);

export const ProcessSignalBodySchema = Type.Object(
  {
    signal: Type.Optional(
      Type.Union(
        PROCESS_SIGNALS.map((s) => Type.Literal(s)),
        { description: "Default TERM" },
      ),
    ),
  },
  { additionalProperties: false },
);

export const ProcessResizeBodySchema = TerminalSizeSchema;

export const ProcessWaitQuerySchema = Type.Object(
  {
    timeoutMs: Type.Optional(Type.Integer({ minimum: 0, maximum: 60_000, description: "Default 30000" })),
  },
  { additionalProperties: false },
);

/** Query of GET …/attach (a WebSocket upgrade). */
export const ProcessAttachQuerySchema = Type.Object(
  {
    offset: Type.Optional(
      Type.Integer({
        minimum: 0,
        description: "Stream offset to send output from (default: the output's current end)",
      }),
    ),
  },
  { additionalProperties: false },
);

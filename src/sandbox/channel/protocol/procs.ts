/**
 * Background processes over the channel (helper protocol version 9): `spawn` starts a process's
 * shim (warden-helper `--proc-run`, images/sandbox/helper), which owns the process from then on
 * and outlives the channel; `keep` tells a helper which shims to spare from its stray sweep (after
 * an adoption, and on every channel that replaces a lost one). Output, input, signals and the exit
 * status go through files in the process's directory, read and written with the file requests
 * (files.ts); the types are in ../../types.ts; src/process/ builds the process model on top of this.
 */
import { InvalidArgumentError, NotFoundError, SandboxError } from "../../../errors.js";
import { checkExec } from "../../io-contract.js";
import type { KeepResult, ShimRef, SpawnRequest, SpawnResult } from "../../types.js";
import { WORKSPACE_DIR } from "../../types.js";
import type { ChannelClient } from "./client.js";
import { FrameType } from "./frame.js";
import { parseJson } from "./messages.js";

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null;
}

const isCount = (v: unknown): v is number => typeof v === "number" && Number.isSafeInteger(v) && v >= 0;

/** Sends one `spawn` request; see ProcessIO.spawn. */
export async function channelSpawn(
  client: ChannelClient,
  request: SpawnRequest,
  options: { signal?: AbortSignal } = {},
): Promise<SpawnResult> {
  const { argv, env } = checkExec(request.command, request.env ? { env: request.env } : {});
  const body = {
    dir: request.dir,
    argv,
    cwd: request.cwd ?? WORKSPACE_DIR,
    env,
    segmentBytes: request.segmentBytes,
    keepSegments: request.keepSegments,
    graceMs: request.graceMs,
    ...(request.pty ? { pty: request.pty } : {}),
  };
  let frame: Awaited<ReturnType<typeof callVersion9>>;
  try {
    frame = await callVersion9(client, FrameType.spawn, body, "starting", argv[0] ?? "", options.signal);
  } catch (err) {
    // The helper's ENOENT is either the program or the working directory: name both.
    if (err instanceof NotFoundError)
      throw new NotFoundError(
        `Cannot start ${JSON.stringify(argv[0])} in ${body.cwd}: the program (looked up in PATH) or the working directory does not exist in the sandbox.`,
      );
    throw err;
  }
  const v = parseJson(frame.payload, "spawn result");
  if (!isRecord(v) || !isCount(v.pid) || !isCount(v.startTime) || !isCount(v.commandPid))
    throw new SandboxError("Malformed spawn result from warden-helper.");
  return { pid: v.pid, startTime: v.startTime, commandPid: v.commandPid };
}

/** Sends one `keep` request; see ProcessIO.keep. */
export async function channelKeep(
  client: ChannelClient,
  shims: readonly ShimRef[],
  options: { signal?: AbortSignal } = {},
): Promise<KeepResult> {
  const body = { shims: shims.map((s) => ({ pid: s.pid, startTime: s.startTime })) };
  const frame = await callVersion9(
    client,
    FrameType.keep,
    body,
    "keeping",
    "background processes",
    options.signal,
  );
  const v = parseJson(frame.payload, "keep result");
  if (!isRecord(v) || !Array.isArray(v.kept) || !v.kept.every(isCount) || !isCount(v.killed))
    throw new SandboxError("Malformed keep result from warden-helper.");
  return { kept: v.kept, killed: v.killed };
}

/** A request only a version-9 helper knows; an older one's "unknown frame type" becomes a clear error. */
async function callVersion9(
  client: ChannelClient,
  type: typeof FrameType.spawn | typeof FrameType.keep,
  body: unknown,
  verb: string,
  what: string,
  signal: AbortSignal | undefined,
) {
  try {
    return await client.call(type, Buffer.from(JSON.stringify(body)), verb, what, signal);
  } catch (err) {
    if (err instanceof InvalidArgumentError && /unknown frame type/.test(err.message))
      throw new SandboxError(
        "This sandbox's warden-helper predates background processes (protocol version 9); rebuild the image with `warden images build` and start a new session.",
        { cause: err },
      );
    throw err;
  }
}

/**
 * `warden attach [--url URL] [--key KEY] [--offset N] <session> <pid>`: a terminal on a background
 * process of a `warden serve` session, over the attach WebSocket (src/client/attach.ts). The URL
 * and key come from the flags or WARDEN_URL and WARDEN_API_KEY. stdin's bytes are the process's
 * input (on a terminal in raw mode, so keys such as Ctrl-C go to the process); its output is
 * written to stdout as it comes; the terminal's size is sent at the start and on each resize.
 * Ctrl-] detaches (exit 0; the process keeps running). stdin's end, from a pipe, is sent as the
 * end of input; input that arrives after the process has exited is dropped silently. Exits with the process's exit code once it has ended; 2 when the attach is refused
 * or the connection closes first.
 */
import type { Command } from "commander";
import { type ProcessAttachment, WardenClient } from "../../client/index.js";
import { InvalidArgumentError } from "../../errors.js";

/** The byte Ctrl-] sends: detach. */
const DETACH = 0x1d;

interface AttachFlags {
  url?: string;
  key?: string;
  offset?: string;
}

/** The terminal's size when stdout is one. */
function terminalSize(): { cols: number; rows: number } | undefined {
  const { columns, rows } = process.stdout;
  return process.stdout.isTTY && columns > 0 && rows > 0 ? { cols: columns, rows } : undefined;
}

/** Sends stdin to the attachment until Ctrl-] (resolves true), stdin's end (false) or the exit. */
function forwardStdin(attachment: ProcessAttachment): Promise<boolean> {
  const stdin = process.stdin;
  return new Promise((resolve) => {
    const stop = (detach: boolean) => {
      stdin.off("data", onData);
      stdin.off("end", onEnd);
      resolve(detach);
    };
    const onData = (chunk: Buffer) => {
      const at = chunk.indexOf(DETACH);
      if (at < 0) return attachment.write(chunk);
      if (at > 0) attachment.write(chunk.subarray(0, at));
      stop(true);
    };
    const onEnd = () => {
      attachment.eof();
      stop(false);
    };
    stdin.on("data", onData);
    stdin.once("end", onEnd);
    void attachment.exited.then(() => stop(false));
  });
}

async function runAttach(sessionId: string, pid: string, flags: AttachFlags): Promise<void> {
  const baseUrl = flags.url ?? process.env.WARDEN_URL;
  const apiKey = flags.key ?? process.env.WARDEN_API_KEY;
  if (!baseUrl) throw new InvalidArgumentError("--url is required (or set WARDEN_URL).");
  if (!apiKey) throw new InvalidArgumentError("--key is required (or set WARDEN_API_KEY).");
  const offset = flags.offset === undefined ? undefined : Number(flags.offset);
  if (offset !== undefined && (!Number.isSafeInteger(offset) || offset < 0))
    throw new InvalidArgumentError(`--offset must be a non-negative integer, got ${flags.offset}.`);

  const attachment = await new WardenClient({ baseUrl, apiKey }).processes(sessionId).attach(pid, {
    ...(offset === undefined ? {} : { offset }),
    onOutput: (data) => process.stdout.write(data),
    onSkipped: (bytes) =>
      process.stderr.write(`\r\nwarden: ${bytes} bytes of output were no longer kept\r\n`),
    // Input that reached the process after its exit (CONFLICT) is dropped: the exit message follows.
    onError: (err) => {
      if (err.code !== "CONFLICT") process.stderr.write(`\r\nwarden: ${err.code}: ${err.message}\r\n`);
    },
  });
  const stdin = process.stdin;
  const raw = stdin.isTTY === true;
  if (raw) stdin.setRawMode(true);
  const sendSize = () => {
    const size = terminalSize();
    if (size) attachment.resize(size);
  };
  if (attachment.process.pty) {
    sendSize();
    process.stdout.on("resize", sendSize);
  }
  let detached = false;
  void forwardStdin(attachment).then((ctrl) => {
    if (!ctrl) return;
    detached = true;
    attachment.close();
  });
  const exit = await attachment.exited;
  if (raw) stdin.setRawMode(false);
  process.stdout.off("resize", sendSize);
  stdin.destroy();
  if (detached) {
    process.stderr.write(`\r\nwarden: detached; ${pid} keeps running\n`);
    process.exitCode = 0;
  } else if (exit) process.exitCode = exit.exitCode ?? 1;
  else {
    process.stderr.write(`\r\nwarden: the connection closed before ${pid} exited\n`);
    process.exitCode = 2;
  }
}

/** Registers `warden attach`. */
export function registerAttach(program: Command): void {
  program
    .command("attach")
    .description("attach the terminal to a background process of a warden serve session (Ctrl-] detaches)")
    .argument("<session>", "the session's id")
    .argument("<pid>", "the process's id (p1, p2, …)")
    .option("--url <url>", "the server's base URL (default $WARDEN_URL)")
    .option("--key <key>", "the tenant's API key (default $WARDEN_API_KEY)")
    .option("--offset <n>", "send output from this offset (default: the output's current end)")
    .action((sessionId: string, pid: string, flags: AttachFlags) => runAttach(sessionId, pid, flags));
}

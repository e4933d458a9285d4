/**
 * `warden mcp`: an MCP server over stdio exposing one session's enabled tools, for MCP clients
 * (Claude Code, Codex, Cursor, the MCP Inspector). It takes the session flags `warden exec` takes.
 * With `--policy`, an `ask` (of a tool call, or of a connection under a `network:` ask rule) is put
 * to the client's user by MCP elicitation, or refused (non-interactive) when the client lacks it.
 * Stdout carries only MCP messages; diagnostics go to stderr.
 * Without `--policy` the shipped default policy applies (said on stderr; `--policy allow-all` turns it off).
 * The session (container and spill files) is closed when the client disconnects (stdin ends) or on
 * SIGINT/SIGTERM/SIGHUP; the process then exits 0. Before that, a copy-mode session that changed
 * files saves its patch and names it on stderr (../session/session-patch.ts): the host is never
 * written, and the work is kept for `warden apply`. Exit 2 when the session cannot be created, or
 * when the MCP SDK (@modelcontextprotocol/sdk, an optional package) is not installed: it and
 * src/mcp, which imports it, load when the command runs.
 */
import type { Command } from "commander";
import { createPolicyHookFromFiles, networkApprover } from "../../policy/index.js";
import { createSession } from "../../session/index.js";
import { importOptional, OPTIONAL_FEATURES } from "../../util/index.js";
import { addSessionFlags, type SessionFlags, sessionOptionsOf } from "../flags/session-flags.js";
import { SESSION_SIGNALS } from "../session/interrupt.js";
import { saveSessionChanges, startSessionPatch } from "../session/session-patch.js";

const SIGNALS = SESSION_SIGNALS;

async function runMcp(flags: SessionFlags): Promise<void> {
  const [{ StdioServerTransport }, { createMcpServer, ElicitationApproval, serveSessionTools }] =
    await importOptional(OPTIONAL_FEATURES.mcp, () =>
      Promise.all([import("@modelcontextprotocol/sdk/server/stdio.js"), import("../../mcp/index.js")]),
    );
  const controller = new AbortController();
  let stopRequested = false;
  // A signal during sandbox creation cancels it (createSession then rejects and removes what it made).
  const onEarlySignal = (): void => {
    stopRequested = true;
    controller.abort();
  };
  for (const s of SIGNALS) process.once(s, onEarlySignal);
  // A client that dies closes our pipes: writing a line to them then fails (EPIPE), which must not
  // kill the process before the sandbox is removed (stdin's end stops the session below).
  for (const stream of [process.stdout, process.stderr]) stream.on("error", () => undefined);

  const server = createMcpServer();
  // The policy files' `network:` sections count as in `warden exec`. An `ask`, of a tool call or of
  // a connection under a network `ask` rule, goes to the client by elicitation (or is refused as
  // non-interactive when the client lacks it, which is known only once it has connected).
  const approval = new ElicitationApproval(server);
  const options = await sessionOptionsOf(flags, controller.signal, (files, sessionId) =>
    createPolicyHookFromFiles(files, { sessionId, approval }),
  );
  const approve = networkApprover(approval);
  if (approve && options.sandbox?.network?.mode === "allowlist") options.sandbox.network.approve = approve;
  let session: Awaited<ReturnType<typeof createSession>>;
  let start: Awaited<ReturnType<typeof startSessionPatch>>;
  try {
    start = await startSessionPatch(options);
    session = await createSession(options);
  } finally {
    for (const s of SIGNALS) process.off(s, onEarlySignal);
  }
  serveSessionTools(server, session, controller.signal);

  const finished = new Promise<void>((resolve) => {
    let closing = false;
    const stop = (why: string): void => {
      if (closing) return;
      closing = true;
      process.stderr.write(`warden mcp: ${why}; closing the session and removing the sandbox.\n`);
      controller.abort();
      void server
        .close()
        .catch(() => undefined)
        .then(() => saveSessionChanges(session, start))
        .then(() => session.close())
        .catch((err: unknown) =>
          process.stderr.write(`warden mcp: closing the session failed: ${String(err)}\n`),
        )
        .then(() => resolve());
    };
    for (const s of SIGNALS) process.once(s, () => stop(`${s} received`));
    process.stdin.once("end", () => stop("the client disconnected"));
    process.stdin.once("close", () => stop("the client disconnected"));
    server.onclose = () => stop("the connection closed");
    if (stopRequested) stop("interrupted");
  });
  await server.connect(new StdioServerTransport());
  process.stderr.write(
    `warden mcp: session ${session.id} ready, tools: ${session.enabledTools.join(", ") || "(none)"}\n`,
  );
  await finished;
  // stdin and the engine's keep-alive sockets would hold the process open.
  process.exit(0);
}

/** How `ask` works here, shown after the options in `warden mcp --help`. */
const ASK_HELP = `
A policy "ask" (of a tool call, or of a connection to a domain under a network: ask rule) is put to
the client's user by MCP elicitation: allow-once, allow-session or deny. A client that does not
support elicitation gets it refused (non-interactive); no answer within 5 minutes means deny.`;

/** Registers `warden mcp`. */
export function registerMcp(program: Command): void {
  const command = program
    .command("mcp")
    .description("serve one sandboxed session's tools to an MCP client over stdio")
    .addHelpText("after", ASK_HELP);
  addSessionFlags(command).action((flags: SessionFlags) => runMcp(flags));
}

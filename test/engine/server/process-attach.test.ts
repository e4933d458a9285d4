/**
 * GET /v1/sessions/:id/processes/:pid/attach on a real `warden serve`, on both backends (Docker, and
 * the cluster under `npm run test:k8s`): a PTY
 * process over a raw WebSocket (the first message, output, the terminal's echo of input, a resize
 * that `stty size` sees, the exit message and close code), a pipe process through the TypeScript
 * client, the refusals (another tenant's key, an unknown process: 404), the socket closed with its
 * session (1001), output no longer kept (`skipped`), docs/processes.md's client example (run
 * `npm run build` first), and `warden attach` with stdin from a pipe (output, exit code, Ctrl-]
 * detaches).
 */
import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtemp, readFile, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { NotFoundError, WardenClient } from "../../../src/client/index.js";
import { hashKey } from "../../../src/server/tenancy/auth.js";
import { describeBackend, removeBackendTenant, testServeBackend } from "../../helpers/backend.js";
import { docSnippet } from "../../helpers/doc-snippets.js";
import { runDocTypeScript } from "../../helpers/doc-typescript.js";
import {
  bundleCli,
  cleanUpServe,
  type ServeChild,
  spawnServe,
  writeServeConfig,
} from "../../helpers/server-fixture.js";
import { openRecorded, refusedUpgrade } from "../../helpers/ws-recorder.js";

const TENANT = `test-attach-${randomBytes(4).toString("hex")}`;
const KEY = `key-${TENANT}`;
const OTHER = `${TENANT}-other`;
const OTHER_KEY = `key-${OTHER}`;

/** Runs `warden attach … <session> <pid>` with `input` on a pipe; its stdout, stderr and exit code. */
function runAttachCli(main: string, url: string, args: string[], input: string) {
  const child = spawn(process.execPath, [main, "attach", "--url", url, ...args], {
    stdio: ["pipe", "pipe", "pipe"],
    env: { ...process.env, WARDEN_API_KEY: KEY },
  });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (c: Buffer) => {
    stdout += c.toString();
  });
  child.stderr.on("data", (c: Buffer) => {
    stderr += c.toString();
  });
  child.stdin.end(input);
  return new Promise<{ stdout: string; stderr: string; code: number | null }>((resolve) =>
    child.once("close", (code) => resolve({ stdout, stderr, code })),
  );
}

describeBackend("attaching to a background process over a WebSocket", () => {
  let dir: string;
  let main: string;
  let serve: ServeChild;
  let client: WardenClient;
  let session: string;
  const attachUrl = (pid: string, query = "") =>
    `${serve.url.replace(/^http/, "ws")}/v1/sessions/${session}/processes/${pid}/attach${query}`;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "warden-attach-"));
    main = await bundleCli();
    const path = await writeServeConfig(dir, TENANT, KEY, {
      server: { warmPool: { size: 0 }, ...testServeBackend() },
    });
    const config = JSON.parse(await readFile(path, "utf8")) as { tenants: Record<string, unknown>[] };
    config.tenants.push({ ...config.tenants[0], id: OTHER, keys: [{ id: "k", sha256: hashKey(OTHER_KEY) }] });
    await writeFile(path, JSON.stringify(config));
    serve = await spawnServe(main, path);
    client = new WardenClient({ baseUrl: serve.url, apiKey: KEY });
    session = (await client.createSession()).id;
  });

  afterAll(async () => {
    await cleanUpServe(serve ? [serve] : [], TENANT, dir, main);
    await removeBackendTenant(TENANT);
  });

  it("carries a terminal's output, input, size and exit", async () => {
    const procs = client.processes(session);
    const started = await procs.start({
      command: 'echo ready; read -r line; echo "got:$line"; read -r _; stty size; read -r code; exit "$code"',
      pty: { cols: 80, rows: 24 },
    });
    const ws = await openRecorded(attachUrl(started.id, "?offset=0"), KEY);
    await expect.poll(() => ws.messages.length).toBe(1);
    expect(ws.messages[0]).toMatchObject({
      type: "attached",
      offset: 0,
      process: { id: started.id, pty: true, state: "running" },
    });
    await expect.poll(ws.output).toBe("ready\r\n");
    ws.socket.send(Buffer.from("hello\n"));
    await expect.poll(ws.output).toBe("ready\r\nhello\r\ngot:hello\r\n");
    ws.socket.send(JSON.stringify({ type: "resize", cols: 100, rows: 30 }));
    ws.socket.send(Buffer.from("\n"));
    await expect.poll(ws.output).toBe("ready\r\nhello\r\ngot:hello\r\n\r\n30 100\r\n");
    ws.socket.send(Buffer.from("7\n"));
    expect(await ws.closed).toEqual({ code: 1000, reason: "exited" });
    expect(ws.output()).toBe("ready\r\nhello\r\ngot:hello\r\n\r\n30 100\r\n7\r\n");
    expect(ws.messages.slice(1)).toEqual([{ type: "exit", exitCode: 7, exitSignal: null }]);
  });

  it("attaches a pipe process through the client, from the output's end by default", async () => {
    const procs = client.processes(session);
    const started = await procs.start({ command: 'echo before; read -r x; echo "pipe:$x"; exit 3' });
    await expect.poll(async () => (await procs.get(started.id)).outputBytes).toBe(7);
    const chunks: Uint8Array[] = [];
    const attachment = await procs.attach(started.id, { onOutput: (d) => chunks.push(d) });
    expect([attachment.offset, attachment.process.pty]).toEqual([7, false]);
    attachment.write("abc\n");
    expect(await attachment.exited).toEqual({ exitCode: 3, exitSignal: null });
    expect(Buffer.concat(chunks).toString()).toBe("pipe:abc\n");
  });

  it("refuses another tenant's key and an unknown process with 404", async () => {
    const started = await client.processes(session).start({ command: "sleep 30" });
    const other = await refusedUpgrade(attachUrl(started.id), OTHER_KEY);
    expect(other).toEqual({
      status: 404,
      body: {
        code: "NOT_FOUND",
        message: `Session '${session}' not found. List your sessions with GET /v1/sessions.`,
      },
    });
    expect((await refusedUpgrade(attachUrl("p99"), KEY)).status).toBe(404);
    expect(await refusedUpgrade(attachUrl(started.id, "?offset=999"), KEY)).toEqual({
      status: 400,
      body: {
        code: "INVALID_ARGUMENT",
        message: `offset 999 is past the end of process ${started.id}'s output (0 bytes so far); attach from 0 or less.`,
      },
    });
    const plain = await fetch(attachUrl(started.id).replace(/^ws/, "http"), {
      headers: { authorization: `Bearer ${KEY}` },
    });
    expect([plain.status, ((await plain.json()) as { code: string }).code]).toEqual([
      400,
      "INVALID_ARGUMENT",
    ]);
    await expect(client.processes(session).attach("p99")).rejects.toBeInstanceOf(NotFoundError);
    await client.processes(session).signal(started.id, "KILL");
  });

  it("warden attach: stdin from a pipe, output on stdout, the process's exit code; Ctrl-] detaches", async () => {
    const procs = client.processes(session);
    const a = await procs.start({ command: 'read -r x; echo "cli:$x"; exit 5' });
    const ran = await runAttachCli(main, serve.url, ["--offset", "0", session, a.id], "piped\n");
    expect([ran.stdout, ran.stderr, ran.code]).toEqual(["cli:piped\n", "", 5]);

    const b = await procs.start({ command: "echo up; sleep 60", pty: { cols: 80, rows: 24 } });
    const detached = await runAttachCli(main, serve.url, ["--offset", "0", session, b.id], "\x1d");
    expect(detached.code).toBe(0);
    const refused = await runAttachCli(main, serve.url, [session, "p99"], "");
    expect([refused.stdout, refused.stderr, refused.code]).toEqual([
      "",
      'warden: NOT_FOUND: No background process "p99" in this session; list the processes to see their ids.\n',
      2,
    ]);
    expect(detached.stderr).toContain(`detached; ${b.id} keeps running`);
    expect((await procs.get(b.id)).state).toBe("running");
    await procs.signal(b.id, "KILL");
  });

  it("says which output was no longer kept, then sends the rest", async () => {
    const procs = client.processes(session);
    const started = await procs.start({ command: "head -c 10485760 /dev/zero | tr '\\0' x" });
    const done = await procs.wait(started.id, { timeoutMs: 60_000 });
    expect([done.state, done.exitCode, done.outputBytes]).toEqual(["exited", 0, 10485760]);
    expect(done.keptFrom).toBeGreaterThan(0);
    const ws = await openRecorded(attachUrl(started.id, "?offset=0"), KEY);
    expect(await ws.closed).toEqual({ code: 1000, reason: "exited" });
    expect(ws.messages.map((m) => m.type)).toEqual(["attached", "skipped", "exit"]);
    expect(ws.messages[1]).toEqual({ type: "skipped", bytes: done.keptFrom });
    const text = ws.output();
    expect(text.length).toBe(10485760 - done.keptFrom);
    expect(text.replaceAll("x", "")).toBe("");
  });

  it("processes-attach: the page's client example prints what it says", async () => {
    const result = await runDocTypeScript(docSnippet("docs/processes.md", "processes-attach"), {
      env: { WARDEN_URL: serve.url, WARDEN_API_KEY: KEY },
    });
    expect(result.exitCode, result.stderr).toBe(0);
    expect(result.stdout.trimEnd()).toBe(
      '"world\\r\\nhello world\\r\\n40 120\\r\\n" { exitCode: 0, exitSignal: null }',
    );
  });

  it("closes the socket when its session closes", async () => {
    const started = await client
      .processes(session)
      .start({ command: "sleep 60", pty: { cols: 80, rows: 24 } });
    const ws = await openRecorded(attachUrl(started.id), KEY);
    await client.deleteSession(session);
    expect(await ws.closed).toEqual({ code: 1001, reason: "session closed" });
  });

  it("closes the socket when the server shuts down", async () => {
    session = (await client.createSession()).id;
    const started = await client
      .processes(session)
      .start({ command: "sleep 60", pty: { cols: 80, rows: 24 } });
    const ws = await openRecorded(attachUrl(started.id), KEY);
    serve.child.kill("SIGTERM");
    expect(await ws.closed).toEqual({ code: 1001, reason: "server shutting down" });
    expect(await serve.exited).toBe(0);
  });
});

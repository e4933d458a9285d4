/**
 * `kill -9` of `warden serve` with live sessions (one call still running, one tar upload half
 * sent), then a restart: the live sessions are adopted (records intact, files still there) with
 * their exec channel re-attached, the command that was running is killed and audited
 * `interrupted`, a container whose record was never written is removed as an orphan, so are a
 * workspace volume left without its container and the half unpacked upload, while the adopted
 * sessions keep their spill directories until they close; every audit line is whole JSON, and a SIGTERM with `--on-exit close` leaves no
 * container. Also: a docker-exec sandbox's running command is killed on adoption too, and a second
 * server on the same state dir (or one whose port is taken) fails before touching anything.
 * On both backends (test/helpers/backend.ts): on Kubernetes the sandboxes are Pods, which have no
 * workspace volume to leak, and docker-exec does not exist.
 */
import { randomBytes } from "node:crypto";
import { mkdir, mkdtemp, readdir, readFile, unlink } from "node:fs/promises";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import tar from "tar-stream";
import { afterAll, beforeAll, expect, it } from "vitest";
import { getDocker } from "../../../src/sandbox/index.js";
import { serverControllerId } from "../../../src/server/config/index.js";
import {
  backendSandboxes,
  describeBackend,
  itDocker,
  removeBackendTenant,
  TEST_BACKEND,
  testServeBackend,
} from "../../helpers/backend.js";
import {
  bundleCli,
  cleanUpServe,
  type ServeChild,
  spawnServe,
  tenantClient,
  writeServeConfig,
} from "../../helpers/server-fixture.js";
import { beating, stillBeating } from "../../helpers/survivors.js";

const TENANT = `test-crash-${randomBytes(4).toString("hex")}`;

/** Ids of the tenant's containers (or Pods) owned by the server of state dir `state`, sorted. */
const containerIds = async (state: string) =>
  (await backendSandboxes(TENANT))
    .filter((c) => c.controller === serverControllerId(state))
    .map((c) => c.id)
    .sort();
/** A Kubernetes sandbox has no workspace volume: its emptyDir goes with the Pod. */
const DOCKER = TEST_BACKEND === "docker";

/** Shell: prints `beating` once /tmp/beat-<tag> exists (survivors.ts's `beating` makes it). */
const beatSeen = (tag: string) => `test -e /tmp/beat-${tag} && echo beating; true`;

/** Polls `check` until it holds; the test's timeout, not a deadline here, bounds the wait. */
async function waitFor(check: () => Promise<boolean>): Promise<void> {
  while (!(await check())) await new Promise((r) => setTimeout(r, 100));
}
const KEY = `key-${TENANT}`;

describeBackend("warden serve: kill -9 and restart", () => {
  let dir: string;
  let main: string;
  let config: string;
  const children: ServeChild[] = [];

  const { api, bash: run, bashText } = tenantClient(KEY);

  /** warden_sessions_by_exec_path{exec_path} from /metrics. */
  const metric = async (s: ServeChild, path: string): Promise<number> => {
    const text = await (await fetch(`${s.url}/metrics`)).text();
    const m = new RegExp(`^warden_sessions_by_exec_path\\{exec_path="${path}"\\} (\\d+)$`, "m").exec(text);
    return Number(m?.[1] ?? Number.NaN);
  };

  /** POSTs a workspace tar whose one 4 MiB file is only partly sent; the body never ends. */
  const startUpload = (s: ServeChild) => {
    const pack = tar.pack();
    const chunks: Buffer[] = [];
    pack.on("data", (c: unknown) => {
      chunks.push(c as Buffer);
    });
    const entry = pack.entry({ name: "big.bin", size: 4 << 20 }, () => undefined);
    entry.write(Buffer.alloc(256 << 10, 0x61));
    const body = new ReadableStream<Uint8Array>({
      async start(controller) {
        await new Promise((r) => setImmediate(r));
        for (const c of chunks) controller.enqueue(c);
      },
    });
    return api(s, "/v1/sessions", {
      method: "POST",
      body,
      headers: { "content-type": "application/x-tar" },
      duplex: "half",
    } as RequestInit);
  };

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "warden-crash-"));
    main = await bundleCli();
    // Without spares, so every container here is a session's (the pool's crash case: server-pool.test.ts).
    config = await writeServeConfig(dir, TENANT, KEY, {
      server: { warmPool: { size: 0 }, ...testServeBackend() },
    });
  });

  afterAll(async () => {
    await cleanUpServe(children, TENANT, dir, main);
    await removeBackendTenant(TENANT);
  });

  /** A config with a state dir of its own under `dir/name` (tests below are independent of the first). */
  const ownConfig = async (name: string, spares: number) => {
    const own = join(dir, name);
    await mkdir(own);
    const config = await writeServeConfig(own, TENANT, KEY, {
      server: { warmPool: { size: spares }, ...testServeBackend() },
    });
    return { config, state: join(own, "state") };
  };

  it("restarts with no orphan sandbox, no lost record and no torn audit line", async () => {
    const first = await spawnServe(main, config);
    children.push(first);
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      const res = await api(first, "/v1/sessions", { method: "POST", body: "{}" });
      expect(res.status).toBe(201);
      ids.push(((await res.json()) as { id: string }).id);
    }
    const [kept, busy, unrecorded] = ids as [string, string, string];
    expect(await metric(first, "channel")).toBe(3);
    expect(
      ((await (await run(first, kept, "echo before > mark.txt")).json()) as { results: unknown[] }).results,
    ).toHaveLength(1);
    // Output over 2000 lines is cut and kept whole in a spill file under the state dir.
    await run(first, kept, "seq 1 5000");
    expect(await readdir(join(dir, "state", "spill"))).toHaveLength(1);
    // A call still running when the controller dies.
    const inFlight = run(first, busy, `${beating("crash")} & sleep 30`).catch(() => "connection lost");
    // An upload still being sent: its first file is half written under state/uploads.
    const upload = startUpload(first).catch(() => "connection lost");
    await waitFor(async () => (await readdir(join(dir, "state", "uploads")).catch(() => [])).length === 1);
    // The call runs (its batch journaled, its command beating), asked by a call beside it: a fixed
    // wait is what a loaded host outlasts.
    await waitFor(async () => (await bashText(first, busy, beatSeen("crash"))) === "beating\n");
    first.child.kill("SIGKILL");
    expect(await first.exited).toBe(null);
    expect(await inFlight).toBe("connection lost");
    expect(await upload).toBe("connection lost");
    // As if the crash came between creating a container and writing its record.
    await unlink(join(dir, "state", "sessions", `${unrecorded}.json`));
    const recordsBefore = (await readdir(join(dir, "state", "sessions"))).sort();
    expect(recordsBefore).toEqual([`${kept}.json`, `${busy}.json`].sort());
    const recordText = await readFile(join(dir, "state", "sessions", `${kept}.json`), "utf8");

    // As if the crash came between removing a container and its workspace volume (Docker only).
    const leaked = `warden-ws-test-leaked-${randomBytes(4).toString("hex")}`;
    if (DOCKER)
      await getDocker().createVolume({
        Name: leaked,
        Labels: {
          "io.warden.session": "leaked",
          "io.warden.tenant": TENANT,
          "io.warden.controller": serverControllerId(join(dir, "state")),
        },
      });
    const second = await spawnServe(main, config, ["--on-exit", "close"]);
    children.push(second);
    // The adopted sessions keep their spill directories (the cut output's, and the one of the call
    // that was running): their handles stay valid until they close (test/engine/server/spill-adopt.test.ts).
    // The socket directory count is what other runs on this machine left (swept once ten minutes
    // old; test/engine/sandbox/channel/socket.test.ts proves the sweep), so it is not asserted here.
    expect(second.stderr().replace(/, \d+ socket dir\(s\)/, ", N socket dir(s)")).toContain(
      `warden serve: adopted 2, dropped 0, removed 1 orphan(s)${DOCKER ? ", 1 volume(s), N socket dir(s)" : ` in namespace(s) ${testServeBackend().backend?.namespace}`}, 0 spill dir(s), 1 upload(s); 1 interrupted call(s)`,
    );
    expect(await readdir(join(dir, "state", "uploads"))).toEqual([]);
    expect(await readdir(join(dir, "state", "inflight"))).toEqual([]);
    // The adopted sessions' calls go over the re-attached channel, not docker exec; on Docker it
    // moved onto its unix socket again (the directory outlives the server).
    expect(second.stderr()).toContain(
      `warden serve: session ${kept} calls go through channel (${DOCKER ? "socket" : "exec-stream"})`,
    );
    expect(await metric(second, "channel")).toBe(2);
    expect(await metric(second, "docker-exec")).toBe(0);
    expect(await readdir(join(dir, "state", "spill"))).toHaveLength(2);
    // The command the dead server started is gone (Docker: the helper's reset killed it; Kubernetes:
    // the old exec channel stopped it when its stream ended, and the new one kills what is left).
    expect(await bashText(second, busy, stillBeating("crash"))).toBe("gone\n");
    // Only a docker exec asker resets the helper: a command signalling PID 1 changes nothing.
    const helperChild = "ps -o pid= --ppid 1 | tr -d ' '";
    const childPid = await bashText(second, busy, helperChild);
    expect(await bashText(second, busy, "kill -USR1 1; echo rc=$?; sleep 0.5")).toBe("rc=0\n");
    expect(await bashText(second, busy, helperChild)).toBe(childPid);
    // PID 1 now keeps copies of the attach pipes for a reset: a command still cannot reach them.
    expect(await bashText(second, busy, "ls /proc/1/fd 2>&1; echo rc=$?")).toBe(
      "ls: cannot open directory '/proc/1/fd': Permission denied\nrc=2\n",
    );
    if (DOCKER)
      expect((await getDocker().listVolumes({ filters: { name: [leaked] } })).Volumes ?? []).toEqual([]);
    const listed = ((await (await api(second, "/v1/sessions")).json()) as { sessions: { id: string }[] })
      .sessions;
    expect(listed.map((s) => s.id).sort()).toEqual([kept, busy].sort());
    expect(await readFile(join(dir, "state", "sessions", `${kept}.json`), "utf8")).toBe(recordText);
    const after = (await (await run(second, kept, "cat mark.txt")).json()) as {
      results: { content: { text: string }[] }[];
    };
    expect(after.results[0]!.content[0]!.text).toBe("before\n");
    const sandboxes = await backendSandboxes(TENANT);
    expect(sandboxes.map((c) => c.session).sort()).toEqual([kept, busy].sort());

    const audit = (await readFile(join(dir, "state", "audit.jsonl"), "utf8")).split("\n");
    expect(audit.at(-1)).toBe("");
    const entries = audit.slice(0, -1).map((line) => JSON.parse(line) as { kind: string; event?: string });
    const interrupted = entries.filter((e) => e.kind === "interrupted");
    expect(interrupted).toEqual([
      {
        level: 30,
        time: expect.any(String),
        kind: "interrupted",
        tenant: TENANT,
        session: busy,
        batch: expect.stringMatching(/^[0-9a-f-]{36}$/),
        toolCallId: "c",
        tool: "bash",
        startedAt: expect.any(String),
        chain: [
          {
            stream: `tenant:${TENANT}`,
            seq: expect.any(Number),
            prev: expect.stringMatching(/^[0-9a-f]{64}$/),
          },
          {
            stream: `session:${busy}`,
            seq: expect.any(Number),
            prev: expect.stringMatching(/^[0-9a-f]{64}$/),
          },
        ],
      },
    ]);
    expect(entries.filter((e) => e.kind === "session").map((e) => e.event)).toEqual([
      "created",
      "created",
      "created",
      "adopted",
      "adopted",
      "orphan-removed",
    ]);

    second.child.kill("SIGTERM");
    expect(await second.exited).toBe(0);
    expect(await backendSandboxes(TENANT)).toEqual([]);
    expect(await readdir(join(dir, "state", "sessions"))).toEqual([]);
    expect(await readdir(join(dir, "state", "spill"))).toEqual([]);
  });

  itDocker(
    "docker exec is Docker's API; a Pod's calls use the attach channel",
    "docker-exec sandboxes: a restart kills the command the dead server started",
    async () => {
      const env = { WARDEN_EXEC_PATH: "docker-exec" };
      const { config } = await ownConfig("docker-exec", 0);
      const first = await spawnServe(main, config, [], env);
      children.push(first);
      const res = await api(first, "/v1/sessions", { method: "POST", body: "{}" });
      const { id } = (await res.json()) as { id: string };
      expect(await metric(first, "docker-exec")).toBe(1);
      const inFlight = run(first, id, `${beating("crash")} & sleep 30`).catch(() => "connection lost");
      await waitFor(async () => (await bashText(first, id, beatSeen("crash"))) === "beating\n");
      first.child.kill("SIGKILL");
      expect(await inFlight).toBe("connection lost");

      const second = await spawnServe(main, config, ["--on-exit", "close"], env);
      children.push(second);
      expect(second.stderr()).toContain(`warden serve: session ${id} calls go through docker-exec`);
      expect(await metric(second, "docker-exec")).toBe(1);
      expect(await bashText(second, id, stillBeating("crash"))).toBe("gone\n");
      second.child.kill("SIGTERM");
      expect(await second.exited).toBe(0);
    },
  );

  it("SIGHUP (its terminal closed) shuts it down like SIGTERM: with --on-exit close no sandbox is left", async () => {
    const { state, config } = await ownConfig("sighup", 0);
    const served = await spawnServe(main, config, ["--on-exit", "close"]);
    children.push(served);
    const res = await api(served, "/v1/sessions", { method: "POST", body: "{}" });
    expect(res.status).toBe(201);
    expect(await containerIds(state)).toHaveLength(1);
    served.child.kill("SIGHUP");
    expect(await served.exited).toBe(0);
    expect(served.stderr()).toContain("warden serve: SIGHUP, draining");
    expect(await containerIds(state)).toEqual([]);
  });

  it("a second server fails naming the first's pid; the first's containers and spares are untouched", async () => {
    // With one warm spare, which a second server's reconcile would have removed.
    const { state, config } = await ownConfig("lock", 1);
    const first = await spawnServe(main, config);
    children.push(first);
    const res = await api(first, "/v1/sessions", { method: "POST", body: "{}" });
    expect(res.status).toBe(201);
    const { id } = (await res.json()) as { id: string };
    expect(await bashText(first, id, "echo one > f.txt && cat f.txt")).toBe("one\n");
    // The warm pool refills one spare after the claim.
    await waitFor(async () => (await containerIds(state)).length === 2);
    const before = await containerIds(state);
    expect(before).toHaveLength(2);
    const audit = () => readFile(join(state, "audit.jsonl"), "utf8");
    // The request line is written once the response has gone out, so wait for it:
    // created, create request, tool, tool-calls request.
    const auditLines = async () => (await audit()).split("\n").filter(Boolean).length;
    await waitFor(async () => (await auditLines()) === 4);
    const auditBefore = await audit();

    const refused = await spawnServe(main, config).then(
      () => "started",
      (err: Error) => err.message,
    );
    expect(refused).toContain(`is in use by another warden serve (pid ${first.child.pid} on `);
    expect(await containerIds(state)).toEqual(before);
    expect(await audit()).toBe(auditBefore);
    expect(await bashText(first, id, "cat f.txt")).toBe("one\n");
    await waitFor(async () => (await auditLines()) === 6);

    // kill -9: the lock stays behind, stale. A port in use still fails first, reconciling nothing.
    first.child.kill("SIGKILL");
    await first.exited;
    const auditAtCrash = await audit();
    const blocker = createServer();
    await new Promise<void>((r) => blocker.listen(0, "127.0.0.1", r));
    const port = (blocker.address() as { port: number }).port;
    const busyPort = await spawnServe(main, config, ["--port", String(port)]).then(
      () => "started",
      (err: Error) => err.message,
    );
    blocker.close();
    expect(busyPort).toContain(
      `Cannot listen on 127.0.0.1:${port}: the address is in use by another process. ` +
        "Stop that process, or set another 'port' (or 'host') in the config or pass --port.",
    );
    expect(await containerIds(state)).toEqual(before);
    expect(await audit()).toBe(auditAtCrash);

    // A restart after kill -9 takes the stale lock and adopts the session.
    const restarted = await spawnServe(main, config);
    children.push(restarted);
    expect(restarted.stderr()).toContain("warden serve: adopted 1, dropped 0");
    expect(await bashText(restarted, id, "cat f.txt")).toBe("one\n");
  });
});

/**
 * A background process across `kill -9` of `warden serve` and its restart, through the HTTP API and
 * the TypeScript client: the adopted session's process still runs, its output read in pieces
 * before and after the restart has neither gap nor duplicate, the state dir's session record
 * holds the process's record, and the session's end leaves nothing. On both backends.
 */
import { randomBytes } from "node:crypto";
import { mkdtemp, readFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { type SessionProcessesClient, WardenClient } from "../../../src/client/index.js";
import {
  backendLeftovers,
  describeBackend,
  removeBackendTenant,
  testServeBackend,
} from "../../helpers/backend.js";
import {
  bundleCli,
  cleanUpServe,
  type ServeChild,
  spawnServe,
  writeServeConfig,
} from "../../helpers/server-fixture.js";

const TENANT = `test-proc-restart-${randomBytes(4).toString("hex")}`;
const KEY = `key-${TENANT}`;

/** Reads `pid`'s output from `offset` in pieces of 500 bytes until `enough` holds; returns the text and the next offset. */
async function readUntil(
  procs: SessionProcessesClient,
  pid: string,
  offset: number,
  enough: (text: string) => boolean,
): Promise<{ text: string; next: number }> {
  let text = "";
  let next = offset;
  while (!enough(text)) {
    const out = await procs.output(pid, { offset: next, maxBytes: 500 });
    expect([out.offset, out.skipped]).toEqual([next, 0]);
    text += Buffer.from(out.data).toString("utf8");
    next = out.nextOffset;
    if (out.data.length === 0) await new Promise((r) => setTimeout(r, 50));
  }
  return { text, next };
}

describeBackend("a background process across kill -9 of warden serve", () => {
  let dir: string;
  let main: string;
  let config: string;
  const children: ServeChild[] = [];

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "warden-proc-restart-"));
    main = await bundleCli();
    config = await writeServeConfig(dir, TENANT, KEY, {
      server: { warmPool: { size: 0 }, ...testServeBackend() },
    });
  });

  afterAll(async () => {
    await cleanUpServe(children, TENANT, dir, main);
    await removeBackendTenant(TENANT);
  });

  it("keeps running, its output whole, and ends with its session", async () => {
    const first = await spawnServe(main, config);
    children.push(first);
    const before = new WardenClient({ baseUrl: first.url, apiKey: KEY });
    const session = await before.createSession();
    const procs = before.processes(session.id);
    const started = await procs.start({
      command: "i=0; while [ $i -lt 100000 ]; do echo $i; i=$((i+1)); sleep 0.02; done",
    });
    expect([started.id, started.state]).toEqual(["p1", "running"]);
    const early = await readUntil(procs, "p1", 0, (t) => t.includes("\n20\n"));
    // What the route refuses (attack-procs F9): the env names a session's env refuses, bad base64.
    await expect(procs.start({ command: "true", env: { LD_PRELOAD: "/tmp/x.so" } })).rejects.toMatchObject({
      status: 400,
      message: expect.stringContaining("LD_PRELOAD"),
    });
    const bad = await fetch(`${first.url}/v1/sessions/${session.id}/processes/p1/input`, {
      method: "POST",
      headers: { authorization: `Bearer ${KEY}`, "content-type": "application/json" },
      body: JSON.stringify({ base64: "not base64!" }),
    });
    expect([bad.status, ((await bad.json()) as { message: string }).message]).toEqual([
      400,
      "base64 is not base64 (RFC 4648, padded); send the bytes encoded, or send `text`.",
    ]);
    const record = JSON.parse(
      await readFile(join(dir, "state", "sessions", `${session.id}.json`), "utf8"),
    ) as {
      processes: { id: string; command: unknown }[];
    };
    expect(record.processes.map((p) => [p.id, p.command])).toEqual([
      ["p1", { shell: "i=0; while [ $i -lt 100000 ]; do echo $i; i=$((i+1)); sleep 0.02; done" }],
    ]);

    first.child.kill("SIGKILL");
    expect(await first.exited).toBe(null);
    const second = await spawnServe(main, config, ["--on-exit", "close"]);
    children.push(second);
    expect(second.stderr()).toContain("warden serve: adopted 1, dropped 0");
    const after = new WardenClient({ baseUrl: second.url, apiKey: KEY }).processes(session.id);
    expect((await after.get("p1")).state).toBe("running");
    const late = await readUntil(after, "p1", early.next, (t) => t.includes("\n200\n"));
    await after.signal("p1", "KILL");
    const done = await after.wait("p1", { timeoutMs: 20_000 });
    expect([done.state, done.exitCode, done.exitSignal]).toEqual(["exited", 137, 9]);
    const numbers = `${early.text}${late.text}`.trimEnd().split("\n").map(Number);
    expect(numbers).toEqual(Array.from({ length: numbers.length }, (_, i) => i));

    await new WardenClient({ baseUrl: second.url, apiKey: KEY }).deleteSession(session.id);
    expect(await backendLeftovers(TENANT)).toEqual([]);
  });
});

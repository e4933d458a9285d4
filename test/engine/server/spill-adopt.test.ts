/**
 * Issue 37 item 10: a session that a restarted `warden serve` adopts keeps its spill files. A cut
 * output's spill handle stays readable after the restart (the start-up sweep leaves the adopted
 * session's spill directory, which the result's promise "valid until that session closes" needs),
 * and closing the session removes it; a session not adopted loses its directory to the sweep.
 */
import { randomBytes } from "node:crypto";
import { mkdtemp, readdir, readFile, unlink } from "node:fs/promises";
import { hostname, tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { describeEngine } from "../../helpers/engine.js";
import {
  bundleCli,
  cleanUpServe,
  type ServeChild,
  spawnServe,
  tenantClient,
  writeServeConfig,
} from "../../helpers/server-fixture.js";

const TENANT = `test-spill-adopt-${randomBytes(4).toString("hex")}`;
const KEY = `key-${TENANT}`;

interface ToolResult {
  isError: boolean;
  content: { text: string }[];
}

describeEngine("warden serve: an adopted session's spill files outlive the restart", () => {
  let dir: string;
  let main: string;
  let config: string;
  const children: ServeChild[] = [];
  const { api } = tenantClient(KEY);
  const spill = () => join(dir, "state", "spill");

  /** One call of `tool` in session `id`; its result. */
  const call = async (s: ServeChild, id: string, tool: string, args: Record<string, unknown>) => {
    const res = await api(s, `/v1/sessions/${id}/tool-calls`, {
      method: "POST",
      body: JSON.stringify({ toolCalls: [{ id: "c", name: tool, arguments: args }] }),
    });
    expect(res.status).toBe(200);
    return ((await res.json()) as { results: ToolResult[] }).results[0]!;
  };
  const newSession = async (s: ServeChild) => {
    const res = await api(s, "/v1/sessions", { method: "POST", body: "{}" });
    expect(res.status).toBe(201);
    return ((await res.json()) as { id: string }).id;
  };

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "warden-spill-adopt-"));
    main = await bundleCli();
    config = await writeServeConfig(dir, TENANT, KEY, { server: { warmPool: { size: 0 } } });
  });
  afterAll(async () => {
    await cleanUpServe(children, TENANT, dir, main);
  });

  it("a spill handle is read after the restart; closing the session removes its spill directory", async () => {
    const first = await spawnServe(main, config);
    children.push(first);
    const [kept, dropped] = [await newSession(first), await newSession(first)];
    // Output over 2000 lines is cut; the whole of it is kept in a spill file named by a handle.
    const cut = await call(first, kept, "bash", { command: "seq 1 5000" });
    const handle = /\/spill\/[A-Za-z0-9_.-]+\.log/.exec(cut.content[0]!.text)?.[0] ?? "";
    expect(handle).not.toBe("");
    await call(first, dropped, "bash", { command: "seq 1 5000" });
    const dirs = (await readdir(spill())).sort();
    expect(dirs).toHaveLength(2);
    const keptDir = dirs.find((d) => d.startsWith(`warden-spill-${kept}-`))!;

    // A restart keeps live sessions for the next start (onExit "keep", the default)…
    first.child.kill("SIGTERM");
    expect(await first.exited).toBe(0);
    // …except one whose record is gone (as if it never was written): it is not adopted.
    await unlink(join(dir, "state", "sessions", `${dropped}.json`));
    const second = await spawnServe(main, config, ["--on-exit", "close"]);
    children.push(second);
    expect(second.stderr()).toMatch(
      /warden serve: adopted 1, dropped 0, removed 1 orphan\(s\).*, 1 spill dir\(s\),/,
    );
    expect(await readdir(spill())).toEqual([keptDir]);
    // The directory is the new server's now (`warden gc` and the next sweep leave it while it lives).
    expect((await readFile(join(spill(), keptDir, ".owner"), "utf8")).trim()).toBe(
      `${hostname()}:${second.child.pid}`,
    );

    const read = await call(second, kept, "read", { path: handle, offset: 4999 });
    expect(read.isError).toBe(false);
    expect(read.content[0]!.text).toBe("4999\n5000\n");

    expect((await api(second, `/v1/sessions/${kept}`, { method: "DELETE" })).status).toBe(204);
    expect(await readdir(spill())).toEqual([]);
    second.child.kill("SIGTERM");
    expect(await second.exited).toBe(0);
  });
});

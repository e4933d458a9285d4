/**
 * `kill -9` of `warden serve` with live sessions (one call still running), then a restart: the live
 * sessions are adopted (records intact, files still there), a container whose record was never
 * written is removed as an orphan, so are a workspace volume left without its container and the
 * dead server's spill directories, every audit line is whole JSON, and a SIGTERM with
 * `--on-exit close` leaves no container.
 */
import { randomBytes } from "node:crypto";
import { mkdtemp, readdir, readFile, unlink } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Docker from "dockerode";
import { afterAll, beforeAll, expect, it } from "vitest";
import { serverControllerId } from "../../src/server/reconcile.js";
import { describeEngine } from "../helpers/engine.js";
import {
  bundleCli,
  cleanUpServe,
  type ServeChild,
  spawnServe,
  tenantClient,
  tenantContainers,
  writeServeConfig,
} from "./server-fixture.js";

const TENANT = `test-crash-${randomBytes(4).toString("hex")}`;
const KEY = `key-${TENANT}`;

describeEngine("warden serve: kill -9 and restart", () => {
  let dir: string;
  let main: string;
  let config: string;
  const children: ServeChild[] = [];

  const { api, bash: run } = tenantClient(KEY);

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "warden-crash-"));
    main = await bundleCli();
    // Without spares, so every container here is a session's (the pool's crash case: server-pool.test.ts).
    config = await writeServeConfig(dir, TENANT, KEY, { server: { warmPool: { size: 0 } } });
  });

  afterAll(() => cleanUpServe(children, TENANT, dir, main));

  it("restarts with no orphan container, no lost record and no torn audit line", async () => {
    const first = await spawnServe(main, config);
    children.push(first);
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      const res = await api(first, "/v1/sessions", { method: "POST", body: "{}" });
      expect(res.status).toBe(201);
      ids.push(((await res.json()) as { id: string }).id);
    }
    const [kept, busy, unrecorded] = ids as [string, string, string];
    expect(
      ((await (await run(first, kept, "echo before > mark.txt")).json()) as { results: unknown[] }).results,
    ).toHaveLength(1);
    // Output over 2000 lines is cut and kept whole in a spill file under the state dir.
    await run(first, kept, "seq 1 5000");
    expect(await readdir(join(dir, "state", "spill"))).toHaveLength(1);
    // A call still running when the controller dies.
    const inFlight = run(first, busy, "sleep 30").catch(() => "connection lost");
    await new Promise((r) => setTimeout(r, 1000));
    first.child.kill("SIGKILL");
    expect(await first.exited).toBe(null);
    expect(await inFlight).toBe("connection lost");
    // As if the crash came between creating a container and writing its record.
    await unlink(join(dir, "state", "sessions", `${unrecorded}.json`));
    const recordsBefore = (await readdir(join(dir, "state", "sessions"))).sort();
    expect(recordsBefore).toEqual([`${kept}.json`, `${busy}.json`].sort());
    const recordText = await readFile(join(dir, "state", "sessions", `${kept}.json`), "utf8");

    // As if the crash came between removing a container and its workspace volume.
    const docker = new Docker();
    const leaked = `warden-ws-test-leaked-${randomBytes(4).toString("hex")}`;
    await docker.createVolume({
      Name: leaked,
      Labels: {
        "io.warden.session": "leaked",
        "io.warden.tenant": TENANT,
        "io.warden.controller": serverControllerId(join(dir, "state")),
      },
    });
    const second = await spawnServe(main, config, ["--on-exit", "close"]);
    children.push(second);
    // The dead server's spill directories go too (the cut output's, and the one of the call that was
    // running): no session can read them any more.
    expect(second.stderr()).toContain(
      "warden serve: adopted 2, dropped 0, removed 1 orphan(s), 1 volume(s), 2 spill dir(s)",
    );
    expect(await readdir(join(dir, "state", "spill"))).toEqual([]);
    expect((await docker.listVolumes({ filters: { name: [leaked] } })).Volumes ?? []).toEqual([]);
    const listed = ((await (await api(second, "/v1/sessions")).json()) as { sessions: { id: string }[] })
      .sessions;
    expect(listed.map((s) => s.id).sort()).toEqual([kept, busy].sort());
    expect(await readFile(join(dir, "state", "sessions", `${kept}.json`), "utf8")).toBe(recordText);
    const after = (await (await run(second, kept, "cat mark.txt")).json()) as {
      results: { content: { text: string }[] }[];
    };
    expect(after.results[0]!.content[0]!.text).toBe("before\n");
    const containers = await tenantContainers(TENANT);
    expect(containers.map((c) => c.Labels["io.warden.session"]).sort()).toEqual([kept, busy].sort());

    const audit = (await readFile(join(dir, "state", "audit.jsonl"), "utf8")).split("\n");
    expect(audit.at(-1)).toBe("");
    const entries = audit.slice(0, -1).map((line) => JSON.parse(line) as { kind: string; event?: string });
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
    expect(await tenantContainers(TENANT)).toEqual([]);
    expect(await readdir(join(dir, "state", "sessions"))).toEqual([]);
  });
});

/**
 * `warden serve` (the CLI, src/cli/commands/serve.ts) runs its helper threads (V8's garbage
 * collection, libuv's pool) at nice 19 and its event loop at the priority it was started with, so
 * a tenant whose requests make garbage does not take the event loop's CPU (util/thread-priority.ts,
 * issue 11). Read from /proc of the real server process.
 */
import { randomBytes } from "node:crypto";
import { mkdtemp, readdir, readFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { describeEngine } from "../../helpers/engine.js";
import {
  bundleCli,
  cleanUpServe,
  type ServeChild,
  spawnServe,
  writeServeConfig,
} from "../../helpers/server-fixture.js";

const TENANT = `test-threads-${randomBytes(4).toString("hex")}`;

/** Thread id → nice value (field 19 of /proc/<pid>/task/<tid>/stat) of process `pid`. */
async function threadNices(pid: number): Promise<Map<number, number>> {
  const nices = new Map<number, number>();
  for (const tid of await readdir(`/proc/${pid}/task`)) {
    const stat = await readFile(`/proc/${pid}/task/${tid}/stat`, "utf8");
    nices.set(Number(tid), Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[16]));
  }
  return nices;
}

describeEngine("warden serve: thread priorities", () => {
  let dir: string;
  let main: string;
  const children: ServeChild[] = [];
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "warden-threads-"));
    main = await bundleCli();
  });
  afterAll(() => cleanUpServe(children, TENANT, dir, main));

  it("runs every thread but the main one at nice 19; the main thread keeps nice 0", async () => {
    const config = await writeServeConfig(dir, TENANT, `key-${TENANT}`);
    const served = await spawnServe(main, config, ["--on-exit", "close"]);
    children.push(served);
    const pid = served.child.pid!;
    const nices = await threadNices(pid);
    expect(nices.get(pid)).toBe(0);
    const others = [...nices].filter(([tid]) => tid !== pid).map(([, nice]) => nice);
    // V8's platform threads alone are 4 (Node's default --v8-pool-size).
    expect(others.length).toBeGreaterThanOrEqual(4);
    expect(others).toEqual(others.map(() => 19));
    served.child.kill("SIGTERM");
    expect(await served.exited).toBe(0);
  });
});

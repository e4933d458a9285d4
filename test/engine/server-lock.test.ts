/**
 * Two `warden serve` processes on one state directory (issue 11 item 5): the second fails naming
 * the first's pid and touches none of its containers (sessions and warm spares); a port in use
 * fails with host:port and the config field before anything is reconciled; after `kill -9` the
 * stale lock does not block a restart, which adopts the session.
 */
import { randomBytes } from "node:crypto";
import { mkdtemp, readFile } from "node:fs/promises";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
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

const TENANT = `test-lock-${randomBytes(4).toString("hex")}`;
const KEY = `key-${TENANT}`;

/** Container ids of the tenant, sorted. */
const containerIds = async () => (await tenantContainers(TENANT)).map((c) => c.Id).sort();

describeEngine("warden serve: one server per state directory", () => {
  let dir: string;
  let main: string;
  let config: string;
  const children: ServeChild[] = [];
  const { api, bashText } = tenantClient(KEY);

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "warden-lock-"));
    main = await bundleCli();
    config = await writeServeConfig(dir, TENANT, KEY, { server: { warmPool: { size: 1 } } });
  });

  afterAll(() => cleanUpServe(children, TENANT, dir, main));

  it("a second server fails naming the first's pid; the first's containers and spares are untouched", async () => {
    const first = await spawnServe(main, config);
    children.push(first);
    const res = await api(first, "/v1/sessions", { method: "POST", body: "{}" });
    expect(res.status).toBe(201);
    const { id } = (await res.json()) as { id: string };
    expect(await bashText(first, id, "echo one > f.txt && cat f.txt")).toBe("one\n");
    // The warm pool refills one spare after the claim.
    const deadline = Date.now() + 30_000;
    while ((await tenantContainers(TENANT)).length < 2 && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 200));
    }
    const before = await containerIds();
    expect(before).toHaveLength(2);
    const audit = () => readFile(join(dir, "state", "audit.jsonl"), "utf8");
    const auditBefore = await audit();

    const refused = await spawnServe(main, config).then(
      () => "started",
      (err: Error) => err.message,
    );
    expect(refused).toContain(`is in use by another warden serve (pid ${first.child.pid} on `);
    expect(await containerIds()).toEqual(before);
    expect(await audit()).toBe(auditBefore);
    expect(await bashText(first, id, "cat f.txt")).toBe("one\n");
    const auditAtCrash = await audit();

    // kill -9: the lock stays behind, stale. A port in use still fails first, reconciling nothing.
    first.child.kill("SIGKILL");
    await first.exited;
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
    expect(await containerIds()).toEqual(before);
    expect(await audit()).toBe(auditAtCrash);

    // A restart after kill -9 takes the stale lock and adopts the session.
    const restarted = await spawnServe(main, config);
    children.push(restarted);
    expect(restarted.stderr()).toContain("warden serve: adopted 1, dropped 0");
    expect(await bashText(restarted, id, "cat f.txt")).toBe("one\n");
  });
});

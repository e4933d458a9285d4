/**
 * Red-team regression: a command must not reach the channel's attach pipes. Before the fix
 * docker-init (PID 1, uid 1000, dumpable) held them, so a command could write forged reply frames
 * to /proc/1/fd/1 (a failed call reported as exit 0 with fake output, also for later calls via a
 * daemon) or read /proc/1/fd/0 (stealing the controller's requests). Now the helper is PID 1 with
 * /dev/null stdio and its serving child is not dumpable (images/sandbox/helper/init.go), and
 * strays are killed when the last command finishes (sweep.go).
 */
import { afterAll, beforeAll, expect, it } from "vitest";
import { createSandbox } from "../../../../src/sandbox/index.js";
import type { Sandbox } from "../../../../src/sandbox/types.js";
import { ATTACK_REFUSED, attackNow, FORGE } from "../../../helpers/channel-attack.js";
import { describeEngine } from "../../../helpers/engine.js";
import { leftovers, run } from "../../../helpers/sandbox-fixture.js";
import { beating, stillBeating } from "../../../helpers/survivors.js";

const tenant = "test-forgery";

/** A setsid'd, double-forked daemon that keeps attacking for 5 s (or until it is killed), touching /tmp/beat-daemon as it goes. */
const PLANT_DAEMON = `${FORGE}
import time
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        null = os.open("/dev/null", os.O_RDWR)
        for fd in (0, 1, 2):
            os.dup2(null, fd)
        end = time.time() + 5
        while time.time() < end:
            attack()
            try_open("/proc/1/fd/0", os.O_RDONLY)
            open("/tmp/beat-daemon", "w").close()
            time.sleep(0.02)
        os._exit(0)
    os._exit(0)
print("daemon started")
`;

describeEngine("channel forgery (red-team regression)", () => {
  let box: Sandbox;
  beforeAll(async () => {
    box = await createSandbox({ execPath: "channel", tenant, sessionId: "test-forgery-1", ttlMs: 120_000 });
    expect(box.info.execPath).toBe("channel");
  });
  afterAll(async () => {
    await box?.destroy();
    expect(await leftovers(tenant)).toEqual([]);
  });

  it("a command cannot open PID 1's or the helper's fds; forged frames change nothing", async () => {
    const r = await run(box, { argv: ["python3", "-c", attackNow(1)] });
    expect(r.stdout).toBe(ATTACK_REFUSED);
    expect(r.stderr).toBe("");
    expect(r.exitCode).toBe(3);
  });

  it("the same through a shell: printf of forged frames to /proc/1/fd/1, then exit 3", async () => {
    const r = await run(
      box,
      "printf '\\000\\000\\000\\013\\104\\000\\000\\000\\002{\"code\":0}' > /proc/1/fd/1; echo real-output; exit 3",
    );
    expect(r.stdout).toBe("real-output\n");
    expect(r.stderr).toBe("bash: line 1: /proc/1/fd/1: Permission denied\n");
    expect(r.exitCode).toBe(3);
  });

  it("a daemon planted by one call does not change a later call's result, and does not outlive its call", async () => {
    const plant = await run(box, { argv: ["python3", "-c", PLANT_DAEMON] });
    // The daemon descends from this call, so until the call ends it may write into the call's own
    // pipes (on a loaded machine it does): that is this call's output, framed by the helper, and
    // never a frame of its own. The exit status is still the real one.
    expect(plant.exitCode).toBe(0);
    expect(plant.stdout).toContain("daemon started\n");
    const later = await run(box, "sleep 1; echo 'REAL: 3 tests failed'; exit 3");
    expect(later).toMatchObject({ exitCode: 3, stdout: "REAL: 3 tests failed\n", stderr: "" });
    expect(await run(box, stillBeating("daemon"))).toMatchObject({ exitCode: 0, stdout: "gone\n" });
  });

  it("case 19: setsid'd and double-forked children are killed when the call ends", async () => {
    const survivor = beating("c19");
    const r = await run(
      box,
      `setsid bash -c '${survivor}' & (setsid bash -c '${survivor} &' &) ; echo done`,
      {
        timeoutMs: 30_000,
      },
    );
    expect(r).toMatchObject({ exitCode: 0, stdout: "done\n", stderr: "" });
    expect(await run(box, stillBeating("c19"))).toMatchObject({ exitCode: 0, stdout: "gone\n" });
  });

  it("file operations still work after the attacks", async () => {
    await box.writeFile("after.txt", Buffer.from("ok\n"));
    expect((await box.readFile("after.txt", { kind: "bytes", offset: 0, length: 100 })).data.toString()).toBe(
      "ok\n",
    );
  });
});

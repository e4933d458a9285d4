/**
 * Sandbox section: session create+start, and exec round-trip of `true` (p50/p90), for warden's
 * DockerSandbox beside raw dockerode (plain create/start/exec of the same image) in the same run.
 */
import { randomBytes } from "node:crypto";
import type Docker from "dockerode";
import { createSandbox, DEFAULT_IMAGE, gc, getDocker, LABEL } from "../../src/sandbox/index.js";
import type { Sandbox } from "../../src/sandbox/types.js";
import { type BenchRow, type BenchSection, percentile, timeRuns } from "../harness.js";

const CREATES = Number(process.env.WARDEN_BENCH_CREATES ?? 5);
const EXECS = Number(process.env.WARDEN_BENCH_EXECS ?? 30);
const RAW = "raw dockerode";

async function rawExecTrue(container: Docker.Container): Promise<void> {
  const exec = await container.exec({ Cmd: ["true"], AttachStdout: true, AttachStderr: true });
  const stream = await exec.start({ hijack: true, stdin: false });
  stream.resume();
  await new Promise((resolve) => stream.once("end", resolve));
  await exec.inspect();
}

export const sandboxSection: BenchSection = {
  name: "sandbox",
  description: "create+start and exec round-trip, warden vs raw dockerode",
  async run(): Promise<BenchRow[]> {
    const docker = getDocker();
    const tenant = `bench-${randomBytes(3).toString("hex")}`;
    const labels = {
      [LABEL.session]: "bench-raw",
      [LABEL.tenant]: tenant,
      [LABEL.expires]: new Date(Date.now() + 3_600_000).toISOString(),
    };
    const raws: Docker.Container[] = [];
    const sandboxes: Sandbox[] = [];
    try {
      const rawCreate: number[] = [];
      const wardenCreate: number[] = [];
      // Interleaved so both paths see the same engine load.
      for (let i = 0; i < CREATES; i++) {
        const rawRun = await timeRuns(1, async () => {
          const c = await docker.createContainer({
            Image: DEFAULT_IMAGE,
            Cmd: ["sleep", "infinity"],
            Labels: labels,
            HostConfig: { NetworkMode: "none", Init: true },
          });
          raws.push(c);
          await c.start();
        });
        rawCreate.push(...rawRun);
        wardenCreate.push(
          ...(await timeRuns(1, async () =>
            sandboxes.push(await createSandbox({ tenant, ttlMs: 3_600_000 })),
          )),
        );
      }
      const raw = raws[0];
      const sb = sandboxes[0];
      if (!raw || !sb) throw new Error("no container to exec in");
      await rawExecTrue(raw);
      await sb.exec({ argv: ["true"] });
      const rawExec: number[] = [];
      const wardenExec: number[] = [];
      // Interleaved so both paths see the same engine load.
      for (let i = 0; i < EXECS; i++) {
        rawExec.push(...(await timeRuns(1, () => rawExecTrue(raw))));
        wardenExec.push(...(await timeRuns(1, () => sb.exec({ argv: ["true"] }))));
      }
      return [
        {
          name: "create+start p50",
          unit: "ms",
          value: percentile(wardenCreate, 50),
          baseline: percentile(rawCreate, 50),
          baselineName: RAW,
        },
        {
          name: "exec true p50",
          unit: "ms",
          value: percentile(wardenExec, 50),
          baseline: percentile(rawExec, 50),
          baselineName: RAW,
        },
        {
          name: "exec true p90",
          unit: "ms",
          value: percentile(wardenExec, 90),
          baseline: percentile(rawExec, 90),
          baselineName: RAW,
        },
      ];
    } finally {
      await Promise.all(sandboxes.map((s) => s.destroy()));
      await Promise.all(raws.map((c) => c.remove({ force: true }).catch(() => {})));
      await gc({ tenant, now: new Date(Date.now() + 7_200_000) });
    }
  },
};

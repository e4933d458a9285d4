/**
 * Tenant data never lands on the node's disk. The CRI runtime writes every byte of a container's
 * stdout and stderr to the kubelet's pod log directory (podLogsDir, /var/log/pods by default:
 * <namespace>_<pod>_<uid>/<container>/N.log), where `kubectl logs` (pods/log) reads it back and
 * where it stays until rotation; a Pod spec cannot turn that off. When the channel was carried by
 * the container's attach stream (warden-helper as the container's process, its stdout the reply
 * frames), every command output and file read of every session was written there. The channel
 * is now a pods/exec stream, whose output the CRI does not log; the container's own process is an
 * idle init that writes nothing. This test reads the node's disk: it runs on the node of
 * scripts/ensure-k8s.sh (the kubelet's configz names the directory).
 */
import { readdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { createKubernetesSandbox, type KubernetesSandbox } from "../../src/sandbox/kubernetes/index.js";
import { describeK8s, podLeftovers, testCluster } from "../helpers/k8s.js";
import { run } from "../helpers/sandbox-fixture.js";

const TENANT = `test-k8s-logs-${process.pid}`;
/** Markers that only the command's output and a file read carry (the request spells them apart). */
const OUTPUT_MARKER = `OUT-MARKER-${process.pid}-${Date.now()}`;
const FILE_MARKER = `FILE-MARKER-${process.pid}-${Date.now()}`;

/** Every file under `dir`, recursively. */
async function filesUnder(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...(await filesUnder(path)));
    else if (entry.isFile()) out.push(path);
  }
  return out;
}

describeK8s("Kubernetes channel: nothing of a session on the node's disk or in kubectl logs", () => {
  const cluster = testCluster();
  let sandbox: KubernetesSandbox;

  beforeAll(async () => {
    sandbox = await createKubernetesSandbox({ tenant: TENANT }, cluster);
  });

  afterAll(async () => {
    await sandbox?.destroy();
    expect(await podLeftovers(TENANT)).toEqual([]);
  });

  it("a command's output and a file's content reach the controller and no pod log", async () => {
    const half = OUTPUT_MARKER.length >> 1;
    const printed = await run(
      sandbox,
      `printf '%s%s\\n' '${OUTPUT_MARKER.slice(0, half)}' '${OUTPUT_MARKER.slice(half)}'; printf '%s%s\\n' err '${OUTPUT_MARKER.slice(half)}' >&2`,
    );
    expect(printed).toMatchObject({ exitCode: 0, stdout: `${OUTPUT_MARKER}\n` });
    await sandbox.writeFile("secret.txt", Buffer.from(`${FILE_MARKER}\n`));
    const read = await sandbox.readFile("secret.txt", { kind: "bytes", offset: 0, length: 1000 });
    expect(read.data.toString()).toBe(`${FILE_MARKER}\n`);

    const pod = await cluster.core.readNamespacedPod({
      name: sandbox.info.containerId,
      namespace: cluster.namespace,
    });
    const node = pod.spec?.nodeName ?? "";
    // The client parses the JSON answer already (typed as a string).
    const answer: unknown = await cluster.core.connectGetNodeProxyWithPath({ name: node, path: "configz" });
    const configz = (typeof answer === "string" ? JSON.parse(answer) : answer) as {
      kubeletconfig: { podLogsDir?: string };
    };
    const logsDir = configz.kubeletconfig.podLogsDir ?? "/var/log/pods";
    // The Pod's own log file exists (the CRI does log this container), so the search is not vacuous.
    const podDir = join(logsDir, `${cluster.namespace}_${pod.metadata?.name}_${pod.metadata?.uid}`);
    const podFiles = await filesUnder(podDir).catch((err: Error) => {
      throw new Error(`${podDir} is not readable (${err.message}): run this test on the cluster's node`);
    });
    expect(podFiles.some((f) => f.startsWith(join(podDir, "sandbox")) && f.endsWith(".log"))).toBe(true);

    const found: string[] = [];
    for (const file of await filesUnder(logsDir)) {
      const text = await readFile(file, "latin1").catch(() => "");
      if (text.includes(OUTPUT_MARKER) || text.includes(FILE_MARKER)) found.push(file);
    }
    expect(found).toEqual([]);

    // `kubectl logs`: the container wrote nothing at all (no frame, no marker).
    const logs = await cluster.core.readNamespacedPodLog({
      name: sandbox.info.containerId,
      namespace: cluster.namespace,
      container: "sandbox",
    });
    expect(logs).toBe("");
  });
});

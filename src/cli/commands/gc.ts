/**
 * `warden gc [--dry-run] [--tenant <t>] [--namespace <ns>]... [--kubeconfig <file>]`: removes warden
 * containers and volumes (with --namespace: the Kubernetes sandbox Pods of those namespaces instead,
 * e.g. a server's `backend.namespace` and each of its `backend.tenantNamespaces`, one after another)
 * that are expired or whose controller process is gone, printing one line per removal
 * (`container <id> session=… tenant=… expired`),
 * then (without --tenant: spill directories have none) the spill directories in the temp directory
 * whose controller process is gone (`spill-dir <path> owner=host:pid (orphaned)`).
 */
import type { Command } from "commander";
import { type GcRemoval, openSandboxBackend } from "../../sandbox/index.js";
import { connectCluster, gcPods, loadKubernetesClient } from "../../sandbox/kubernetes/index.js";
import { sweepSpillDirs } from "../../session/index.js";

/** Registers `warden gc`. */
export function registerGc(program: Command): void {
  program
    .command("gc")
    .description(
      "Remove expired or orphaned warden sandboxes (containers and their volumes) and orphaned spill directories",
    )
    .option("--dry-run", "only print what would be removed")
    .option("--tenant <tenant>", "only this tenant's sandboxes")
    .option(
      "--namespace <namespace>",
      "sweep the sandbox Pods of this Kubernetes namespace instead of Docker (repeat it for several)",
      (value: string, previous: string[] = []) => [...previous, value],
    )
    .option("--kubeconfig <file>", "kubeconfig for --namespace (default $KUBECONFIG or ~/.kube/config)")
    .action(
      async (flags: { dryRun?: boolean; tenant?: string; namespace?: string[]; kubeconfig?: string }) => {
        const dryRun = flags.dryRun === true;
        const options = { dryRun, tenant: flags.tenant };
        const removed: GcRemoval[] = [];
        if (flags.namespace) await loadKubernetesClient();
        for (const namespace of flags.namespace ?? []) {
          const cluster = connectCluster({
            namespace,
            ...(flags.kubeconfig ? { kubeconfig: flags.kubeconfig } : {}),
          });
          removed.push(...(await gcPods(cluster, options)));
        }
        if (!flags.namespace) {
          // The Docker backend's gc (its open pings the engine: EngineUnreachableError names it).
          const backend = await openSandboxBackend({ kind: "docker" });
          try {
            removed.push(...(await backend.gc(options)));
          } finally {
            await backend.close();
          }
        }
        const verb = dryRun ? "would remove" : "removed";
        for (const r of removed) {
          const id = r.kind === "container" ? r.id.slice(0, 12) : r.id;
          console.log(`${verb} ${r.kind} ${id} session=${r.sessionId} tenant=${r.tenant} (${r.reason})`);
        }
        const spills = flags.tenant === undefined ? await sweepSpillDirs({ dryRun }) : [];
        for (const s of spills) console.log(`${verb} spill-dir ${s.path} owner=${s.owner} (orphaned)`);
        const count = removed.length + spills.length;
        console.log(`${count} resource(s) ${dryRun ? "would be removed" : "removed"}`);
      },
    );
}

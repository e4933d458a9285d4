/**
 * `warden gc [--dry-run] [--tenant <t>]`: removes warden containers and volumes that are expired or
 * whose controller process is gone, printing one line per removal (`container <id> session=… tenant=… expired`).
 */
import type { Command } from "commander";
import { gc } from "../../sandbox/index.js";

/** Registers `warden gc`. */
export function registerGc(program: Command): void {
  program
    .command("gc")
    .description("Remove expired or orphaned warden sandboxes (containers and their volumes)")
    .option("--dry-run", "only print what would be removed")
    .option("--tenant <tenant>", "only this tenant's sandboxes")
    .action(async (flags: { dryRun?: boolean; tenant?: string }) => {
      const removed = await gc({ dryRun: flags.dryRun === true, tenant: flags.tenant });
      const verb = flags.dryRun ? "would remove" : "removed";
      for (const r of removed) {
        const id = r.kind === "container" ? r.id.slice(0, 12) : r.id;
        console.log(`${verb} ${r.kind} ${id} session=${r.sessionId} tenant=${r.tenant} (${r.reason})`);
      }
      console.log(`${removed.length} resource(s) ${flags.dryRun ? "would be removed" : "removed"}`);
    });
}

/**
 * What `--mode copy` leaves out of the sandbox for the CLI: `--exclude` patterns, the workspace's
 * `.wardenignore` (gitignore syntax, at its root), and every file the session's policy files deny
 * reading (a deny rule on `read` matching `/workspace/<path>`, as the policy would judge a read of it).
 */
import { lstat, readFile } from "node:fs/promises";
import { join } from "node:path";
import { judge, loadPolicy } from "../../policy/index.js";
import { WORKSPACE_DIR } from "../../sandbox/index.js";

/** `exclude` patterns and the `excludeIf` predicate for a copy-mode workspace at `hostPath`. */
export async function workspaceExclusions(
  hostPath: string,
  flags: { exclude?: string[]; policy?: string[] },
): Promise<{ exclude: string[]; excludeIf?: (relPath: string) => boolean }> {
  const exclude = [...(flags.exclude ?? [])];
  const ignoreFile = join(hostPath, ".wardenignore");
  const st = await lstat(ignoreFile).catch(() => undefined);
  if (st?.isFile()) exclude.push(...(await readFile(ignoreFile, "utf8")).split(/\r?\n/));
  if (!flags.policy || flags.policy.length === 0) return { exclude };
  const policy = await loadPolicy(flags.policy);
  const excludeIf = (relPath: string): boolean =>
    !relPath.endsWith("/") &&
    judge(policy, { kind: "argument", tools: ["read"], path: `${WORKSPACE_DIR}/${relPath}`, via: [] })
      .decision === "deny";
  return { exclude, excludeIf };
}

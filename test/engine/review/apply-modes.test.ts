/**
 * attack-38a: `--apply` (applyChanges, as `warden run --apply` and the library use it) writes a
 * file's permission bits only. The sandbox's user could set the set-user-ID, set-group-ID and sticky
 * bits on its own files, and the review read them back with the file: a `chmod 6777 s` in a copy-mode
 * session became a host file `-rwsr-sr-x root root` holding the session's bytes, on both exec paths.
 * Since warden-helper 8 the sandbox can set only the sticky bit (setid-modes.test.ts); apply still
 * writes permission bits only, whatever the sandbox's file has (an older image's can have more).
 * Docker only: the review's host side (collectChanges over a host workspace) is the CLI's and the
 * library's, not the server's.
 */
import { mkdtempSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, expect, it } from "vitest";
import { applyChanges, collectChanges } from "../../../src/review/index.js";
import { createTestSession } from "../../helpers/backend.js";
import { describeEngine } from "../../helpers/engine.js";

/** The permission bits a file created here with `mode` gets (the process umask applied). */
function createdMode(dir: string, name: string, mode: number): number {
  writeFileSync(join(dir, name), "", { mode });
  return statSync(join(dir, name)).mode & 0o7777;
}

describeEngine("--apply writes permission bits only", () => {
  const dirs: string[] = [];
  afterAll(() => {
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  for (const execPath of ["channel", "docker-exec"] as const) {
    it(`${execPath}: a file made 1777 and one changed to 1755 in the sandbox (6777 and 4755 refused) reach the host without set-user-ID, set-group-ID or sticky bits`, async () => {
      const host = mkdtempSync(join(tmpdir(), "warden-apply-modes-"));
      const scratch = mkdtempSync(join(tmpdir(), "warden-apply-modes-ref-"));
      dirs.push(host, scratch);
      writeFileSync(join(host, "run.sh"), "old\n", { mode: 0o755 });
      const session = await createTestSession({
        sandbox: { workspace: { hostPath: host, mode: "copy" }, execPath },
      });
      try {
        const [r] = await session.runToolCalls([
          {
            id: "c1",
            name: "bash",
            arguments: {
              command:
                "printf 'id\\n' > s; chmod 6777 s 2>/dev/null || echo refused; chmod 1777 s; " +
                "printf 'new\\n' > run.sh; chmod 4755 run.sh 2>/dev/null || echo refused; chmod 1755 run.sh; " +
                "stat -c '%a %n' s run.sh",
            },
          },
        ]);
        // The set-ID bits are refused in the sandbox since warden-helper 8 (setid-modes.test.ts); the
        // sticky bit is not, and apply drops it: the host file gets what apply writes, not the sandbox's mode.
        expect(r?.content).toEqual([{ type: "text", text: "refused\nrefused\n1777 s\n1755 run.sh\n" }]);
        const changes = await collectChanges(session.sandbox, host);
        expect(await applyChanges(host, changes)).toEqual({
          written: ["run.sh", "s"],
          deleted: [],
          merged: [],
          skipped: [],
        });
      } finally {
        await session.close();
      }
      expect(statSync(join(host, "s")).mode & 0o7777).toBe(createdMode(scratch, "a", 0o777));
      expect(statSync(join(host, "run.sh")).mode & 0o7777).toBe(createdMode(scratch, "b", 0o755));
    });
  }
});

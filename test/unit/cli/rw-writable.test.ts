/** `--mode rw` on a directory the sandbox user (uid 1000) cannot write: an error naming owner, mode and fix. */
import { chmodSync, mkdtempSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { sandboxWriteWarning } from "../../../src/cli/flags/session-flags.js";

describe("--mode rw writability", () => {
  it.skipIf(process.getuid?.() === 1000)(
    "names uid 1000 and how to fix it instead of a bare EACCES",
    async () => {
      const dir = mkdtempSync(join(tmpdir(), "warden-rw-"));
      chmodSync(dir, 0o755);
      const { uid, gid } = statSync(dir);
      expect(await sandboxWriteWarning(dir)).toBe(
        `--mode rw: ${dir} is owned by uid ${uid}:${gid} with mode 755, so the sandbox user (uid 1000) cannot write it. ` +
          `Fix: sudo chown -R 1000:1000 ${dir}, or use --mode copy (the default: review, then apply).`,
      );
      chmodSync(dir, 0o777);
      expect(await sandboxWriteWarning(dir)).toBeUndefined();
    },
  );
});

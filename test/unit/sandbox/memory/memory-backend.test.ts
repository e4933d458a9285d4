/** What the memory backend does beyond the conformance suite: no process runs, adoption is per instance. */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { InvalidArgumentError } from "../../../../src/errors.js";
import { memoryBackend } from "../../../../src/sandbox/memory/index.js";

describe("memory backend", () => {
  it("exec refuses any other command, a shell script included, with INVALID_ARGUMENT naming it", async () => {
    const backend = memoryBackend();
    const sandbox = await backend.create({}, { tenant: "test-memory" });
    const refused = sandbox.exec({ argv: ["rm", "-rf", "/"] });
    await expect(refused).rejects.toBeInstanceOf(InvalidArgumentError);
    await expect(refused).rejects.toMatchObject({
      code: "INVALID_ARGUMENT",
      field: "command",
      problem:
        'the memory backend runs no process and answers only the argv commands echo, true, false, sleep; got ["rm","-rf","/"]. Use the docker or kubernetes backend to run it.',
    });
    await expect(sandbox.exec({ shell: "echo hi" })).rejects.toMatchObject({
      code: "INVALID_ARGUMENT",
      problem: expect.stringContaining('got the shell script "echo hi"'),
    });
    await expect(sandbox.exec({ argv: ["sleep", "soon"] })).rejects.toMatchObject({
      code: "INVALID_ARGUMENT",
      problem: 'sleep takes one number of seconds, got ["soon"].',
    });
    await sandbox.destroy();
    await backend.close();
  });

  it("an abort before the command starts ends it aborted with 130", async () => {
    const backend = memoryBackend();
    const sandbox = await backend.create({}, { tenant: "test-memory" });
    const result = await sandbox.exec({ argv: ["echo", "x"] }, { signal: AbortSignal.abort() });
    expect([result.exitCode, result.aborted, result.timedOut]).toEqual([130, true, false]);
    await sandbox.destroy();
    await backend.close();
  });

  it("adopts only what this instance holds (another instance is another engine)", async () => {
    const first = memoryBackend();
    const sandbox = await first.create({}, { tenant: "test-memory", sessionId: "s-1" });
    const [entry] = await first.list(["test-memory"]);
    const request = {
      id: entry?.id ?? "",
      sessionId: "s-1",
      tenant: "test-memory",
      image: sandbox.info.image,
      workspaceMode: "copy" as const,
      createdAt: sandbox.info.createdAt,
      expiresAt: sandbox.info.expiresAt,
    };
    expect(await memoryBackend().adopt(request)).toBeNull();
    expect(await first.adopt({ ...request, sessionId: "s-2" })).toBeNull();
    expect(await first.adopt(request)).toBe(sandbox);
    await sandbox.destroy();
    expect(await first.adopt(request)).toBeNull();
    await first.close();
  });

  it("gc names a sandbox whose controller process is gone as orphaned", async () => {
    const backend = memoryBackend();
    // pid 2^22 + 1 is above Linux's pid_max limit: no process has it.
    const { hostname } = await import("node:os");
    const sandbox = await backend.create(
      {},
      { tenant: "test-memory", controllerId: `${hostname()}:4194305` },
    );
    expect(await backend.gc({ tenant: "test-memory" })).toEqual([
      {
        kind: "container",
        id: sandbox.info.containerId,
        sessionId: sandbox.info.sessionId,
        tenant: "test-memory",
        reason: "orphaned",
      },
    ]);
    expect(await backend.list(["test-memory"])).toEqual([]);
    await backend.close();
  });

  it("copies the host workspace less what `exclude` names, and reads the host only", async () => {
    const host = mkdtempSync(join(tmpdir(), "warden-memory-"));
    try {
      mkdirSync(join(host, "skip"));
      writeFileSync(join(host, "skip/big.bin"), "x");
      writeFileSync(join(host, "kept.sh"), "echo\n", { mode: 0o755 });
      const backend = memoryBackend();
      const sandbox = await backend.create(
        { workspace: { hostPath: host, exclude: ["skip/"] } },
        { tenant: "test-memory" },
      );
      expect((await sandbox.listDir(".")).map((e) => e.name)).toEqual(["kept.sh"]);
      expect(await sandbox.stat("kept.sh")).toMatchObject({ type: "file", size: 5, mode: 0o755 });
      expect(await sandbox.changedPaths()).toEqual([]);
      await sandbox.writeFile("kept.sh", Buffer.from("true\n"));
      expect(await sandbox.changedPaths()).toEqual([{ path: "kept.sh", kind: "modified" }]);
      await sandbox.destroy();
      await backend.close();
    } finally {
      rmSync(host, { recursive: true, force: true });
    }
  });
});

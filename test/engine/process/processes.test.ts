/**
 * Background processes (src/process) in a real sandbox, on the backend under test (Docker, or the
 * cluster under `npm run test:k8s`): output read in pieces without loss or duplication, input and
 * end of input, signals, the running limit, a terminal and its size, the kept-output bound, a
 * stray sweep and an adoption that leave the process running with its output intact.
 */
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, expect, it } from "vitest";
import { openProcesses, type Processes } from "../../../src/process/index.js";
import type { AdoptRequest, SandboxBackend } from "../../../src/sandbox/backend.js";
import type { Sandbox } from "../../../src/sandbox/types.js";
import { describeBackend, itDocker, openTestBackend, TEST_IMAGE } from "../../helpers/backend.js";

/** Reads a process's whole output from `from` in pieces of `piece` bytes until it has exited and all is read. */
async function readAll(processes: Processes, id: string, piece: number, from = 0): Promise<string> {
  const parts: Buffer[] = [];
  let offset = from;
  for (;;) {
    const slice = await processes.read(id, { offset, maxBytes: piece });
    expect(slice.skipped).toBe(0);
    expect(slice.offset).toBe(offset);
    parts.push(slice.data);
    offset = slice.nextOffset;
    if (slice.process.state === "exited" && offset === slice.process.outputBytes) break;
    if (slice.data.length === 0) await new Promise((r) => setTimeout(r, 50));
  }
  return Buffer.concat(parts).toString("utf8");
}

/** Waits until the process's output contains `text`; returns the output. */
async function outputContaining(processes: Processes, id: string, text: string): Promise<string> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const out = (await processes.read(id, { maxBytes: 1 << 20 })).data.toString("utf8");
    if (out.includes(text)) return out;
    if (Date.now() > deadline)
      throw new Error(`process ${id} never printed ${JSON.stringify(text)}; output: ${JSON.stringify(out)}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describeBackend("background processes", () => {
  const tenant = `test-proc-${randomUUID().slice(0, 8)}`;
  let backend: SandboxBackend;
  let sandbox: Sandbox;
  let processes: Processes;

  beforeAll(async () => {
    backend = await openTestBackend();
    sandbox = await backend.create(TEST_IMAGE ? { image: TEST_IMAGE } : {}, {
      tenant,
      sessionId: `proc-${randomUUID()}`,
    });
    processes = await openProcesses(sandbox, { limits: { maxRunning: 3 } });
  }, 120_000);

  afterAll(async () => {
    await sandbox?.destroy();
    const left = (await backend?.list([tenant]).catch(() => [])) ?? [];
    await Promise.allSettled(left.map((m) => backend.remove(m)));
    await backend?.close();
  });

  it("keeps the output, read in pieces of 7000 bytes, byte for byte", async () => {
    const p = await processes.start({
      command: { shell: 'for i in $(seq 1 20000); do echo "line $i"; done; echo err >&2' },
    });
    expect([p.id, p.state, p.commandLine]).toEqual([
      "p1",
      "running",
      'for i in $(seq 1 20000); do echo "line $i"; done; echo err >&2',
    ]);
    const expected = `${Array.from({ length: 20000 }, (_, i) => `line ${i + 1}\n`).join("")}err\n`;
    expect(await readAll(processes, p.id, 7000)).toBe(expected);
    const done = await processes.wait(p.id);
    expect([done.state, done.exitCode, done.outputBytes, done.keptFrom, done.droppedBytes]).toEqual([
      "exited",
      0,
      Buffer.byteLength(expected),
      0,
      0,
    ]);
  });

  it("takes input and end of input", async () => {
    const p = await processes.start({ command: { argv: ["cat"] } });
    await processes.write(p.id, Buffer.from("hello\n"));
    await processes.write(p.id, Buffer.from("world\n"));
    await processes.closeInput(p.id);
    const done = await processes.wait(p.id, { timeoutMs: 20_000 });
    expect([done.state, done.exitCode]).toEqual(["exited", 0]);
    expect(await readAll(processes, p.id, 4)).toBe("hello\nworld\n");
    await expect(processes.write(p.id, Buffer.from("late\n"))).rejects.toThrow(
      `Background process ${p.id} has exited; it takes no more input or signals.`,
    );
  });

  it("ends on a signal with 128+N, and refuses a start past the running limit", async () => {
    const a = await processes.start({ command: { argv: ["sleep", "600"] } });
    const b = await processes.start({ command: { argv: ["sleep", "600"] } });
    const c = await processes.start({ command: { argv: ["sleep", "600"] } });
    await expect(processes.start({ command: { argv: ["true"] } })).rejects.toMatchObject({
      code: "CONFLICT",
      message: `3 background processes are running, the session's limit (processes.maxRunning 3); stop one (kill ${a.id}, ${b.id}, ${c.id}) or wait for one to end.`,
    });
    for (const p of [a, b, c]) await processes.kill(p.id);
    const ended = await Promise.all([a, b, c].map((p) => processes.wait(p.id, { timeoutMs: 20_000 })));
    expect(ended.map((p) => [p.state, p.exitCode, p.exitSignal])).toEqual([
      ["exited", 143, 15],
      ["exited", 143, 15],
      ["exited", 143, 15],
    ]);
  });

  it("runs under a terminal of the given size, and sees a resize", async () => {
    const p = await processes.start({
      command: { shell: "test -t 0 && echo is-a-tty; stty size; read line; stty size" },
      pty: { cols: 100, rows: 30 },
    });
    expect(await outputContaining(processes, p.id, "30 100")).toContain("is-a-tty");
    await processes.resize(p.id, { cols: 120, rows: 40 });
    await processes.write(p.id, Buffer.from("\n"));
    await outputContaining(processes, p.id, "40 120");
    const done = await processes.wait(p.id, { timeoutMs: 20_000 });
    expect([done.state, done.exitCode, done.pty]).toEqual(["exited", 0, true]);
  });

  it("keeps only the last segments of a long output, and says what a read skipped", async () => {
    // A sandbox of its own: one Processes per sandbox (ids are the session's).
    const own = await backend.create(TEST_IMAGE ? { image: TEST_IMAGE } : {}, {
      tenant,
      sessionId: `proc-${randomUUID()}`,
    });
    const small = await openProcesses(own, { limits: { segmentBytes: 1024, keptOutputBytes: 4096 } });
    const p = await small.start({ command: { shell: "head -c 10000 /dev/zero | tr '\\0' a" } });
    const done = await small.wait(p.id, { timeoutMs: 20_000 });
    expect([done.exitCode, done.outputBytes, done.keptFrom]).toEqual([0, 10000, 6144]);
    const slice = await small.read(p.id, { offset: 0, maxBytes: 100_000 });
    expect([slice.offset, slice.skipped, slice.data.length, slice.nextOffset]).toEqual([
      6144, 6144, 3856, 10000,
    ]);
    expect(slice.data.toString()).toBe("a".repeat(3856));
    await own.destroy();
  });

  it("survives the stray sweep after a call and an adoption of its sandbox, its output intact", async () => {
    const p = await processes.start({
      command: { shell: "i=0; while [ $i -lt 100000 ]; do echo $i; i=$((i+1)); sleep 0.02; done" },
    });
    await outputContaining(processes, p.id, "\n5\n");
    expect((await sandbox.exec({ argv: ["true"] })).exitCode).toBe(0);
    expect((await processes.info(p.id)).state).toBe("running");
    const entry = (await backend.list([tenant])).find((m) => m.sessionId === sandbox.info.sessionId);
    if (!entry) throw new Error("the sandbox is not listed");
    const { info } = sandbox;
    const request: AdoptRequest = {
      id: entry.id,
      sessionId: info.sessionId,
      tenant,
      image: info.image,
      workspaceMode: info.workspaceMode,
      createdAt: info.createdAt,
      expiresAt: info.expiresAt,
    };
    const adopted = await backend.adopt(request);
    if (!adopted) throw new Error("adopt resolved null");
    const again = await openProcesses(adopted, { records: processes.records() });
    expect((await again.info(p.id)).state).toBe("running");
    // The adopted channel runs calls (and sweeps after them) without touching the process.
    expect((await adopted.exec({ argv: ["true"] })).exitCode).toBe(0);
    await outputContaining(again, p.id, "\n40\n");
    await again.kill(p.id, "KILL");
    const done = await again.wait(p.id, { timeoutMs: 20_000 });
    expect([done.exitCode, done.exitSignal]).toEqual([137, 9]);
    const numbers = (await readAll(again, p.id, 1000)).trimEnd().split("\n").map(Number);
    expect(numbers).toEqual(Array.from({ length: numbers.length }, (_, i) => i));
  });

  it("stays reachable when a command moves its output away, names a missing cwd, and sweeps what a dead shim left", async () => {
    const own = await backend.create(TEST_IMAGE ? { image: TEST_IMAGE } : {}, {
      tenant,
      sessionId: `proc-${randomUUID()}`,
    });
    try {
      const procs = await openProcesses(own);
      const p = await procs.start({ command: { shell: "echo hi; sleep 600" } });
      await outputContaining(procs, p.id, "hi");
      expect((await own.exec({ shell: `mv /tmp/.warden/procs/${p.id}/out /tmp/moved` })).exitCode).toBe(0);
      expect(await procs.info(p.id)).toMatchObject({ state: "running", outputBytes: 0, keptFrom: 0 });
      expect((await procs.list()).map((x) => x.id)).toEqual([p.id]);
      await expect(procs.start({ command: { argv: ["true"] }, cwd: "/nonexistent" })).rejects.toThrow(
        'Cannot start "true" in /nonexistent: the program (looked up in PATH) or the working directory does not exist in the sandbox.',
      );
      // attack-procs F3: a command that kills its own shim leaves an orphan; the next start sweeps it.
      // Its start may even fail: the shim can die before it answers ("exited without an answer").
      const rogue = await procs
        .start({ command: { shell: "kill -9 $PPID; exec sleep 601" } })
        .catch(() => null);
      if (rogue) await procs.wait(rogue.id, { timeoutMs: 20_000 });
      const check = await procs.start({ command: { shell: "pgrep -f 'sleep 60[1]'; echo rc=$?" } });
      await procs.wait(check.id, { timeoutMs: 20_000 });
      expect((await procs.read(check.id)).data.toString()).toBe("rc=1\n");
    } finally {
      await own.destroy();
    }
  });

  itDocker(
    "the docker-exec path exists on Docker only",
    "are refused, with the reason, on the docker-exec path",
    async () => {
      const plain = await backend.create(
        { ...(TEST_IMAGE ? { image: TEST_IMAGE } : {}), execPath: "docker-exec" },
        { tenant, sessionId: `proc-${randomUUID()}` },
      );
      try {
        await expect(openProcesses(plain)).rejects.toThrow(
          `Sandbox ${plain.info.sessionId} cannot run background processes: they need warden's channel (execPath "channel"), and it uses "docker-exec"; start the session with the channel.`,
        );
      } finally {
        await plain.destroy();
      }
    },
  );
});

/**
 * A pseudo file in the workspace's place does not hold the session's file operations. A line read
 * counts the file's lines to its end; /proc/<pid>/pagemap reports size 0 and gives hundreds of GiB
 * while the process lives, so a read of a link to one scanned for minutes in the helper, holding one
 * of its 8 file-operation slots long after the call's 30 s timeout, and 8 of them stalled every
 * read, stat and realpath of the session. The helper now stops a scan past the file's size and its
 * filesystem's capacity plus 1 MiB (images/sandbox/helper/scan.go); devices were already refused
 * at open. The tools' confinement refuses such a link by its target, but a command can swap one in
 * after that check, so this reads through the Sandbox itself, as the tools do after it.
 * On both backends (test/helpers/backend.ts); under gVisor, which has no pagemap, the link dangles.
 */
import { afterAll, beforeAll, expect, it } from "vitest";
import { InvalidArgumentError, NotFoundError } from "../../../src/errors.js";
import type { Sandbox } from "../../../src/sandbox/index.js";
import { backendLeftovers, createTestSandbox, describeBackend } from "../../helpers/backend.js";

const TENANT = "test-tools-pseudo-file";
/** A read tool's first window: 2000 lines, 50 KiB, lines counted to the end. */
const LINES = { kind: "lines", startLine: 1, maxLines: 2000, maxBytes: 50 * 1024 } as const;

/** What a line read of a link to the helper's own pagemap answers (proc: size 0, 0 bytes). */
const pagemapError = (path: string) =>
  `reading ${path}: ${path} gave more than 1048576 bytes, more than a stored file can hold (its size was 0 bytes, its filesystem holds 0): it is a pseudo file such as /proc/<pid>/pagemap, or it keeps growing; read a part of it with bash instead, e.g. head -c 65536 ${path}.`;

describeBackend("a pseudo file in the workspace", () => {
  let sandbox: Sandbox;
  const stopSleeper = new AbortController();
  let sleeper: Promise<unknown> | undefined;

  beforeAll(async () => {
    sandbox = await createTestSandbox({ tenant: TENANT });
    // A command that lives through the tests and links its own pagemap (the helper's is not
    // readable: it is not dumpable); it prints one line once the links are made and stays that process (a
    // last command may be exec'd by the shell, and a pagemap opened before an execve reads empty).
    let linked: () => void = () => {};
    const ready = new Promise<void>((resolve) => (linked = resolve));
    sleeper = sandbox
      .exec(
        {
          shell:
            "ln -s /proc/$$/pagemap p && ln -s /dev/zero z && ln -s /proc/self/status s && echo hello > a.txt && echo linked && sleep 600; echo done",
        },
        { signal: stopSleeper.signal, onStdout: () => linked() },
      )
      .catch(() => undefined);
    await ready;
  });
  afterAll(async () => {
    stopSleeper.abort();
    await sleeper;
    await sandbox?.destroy();
    expect(await backendLeftovers(TENANT)).toEqual([]);
  });

  it("a line read of a link to /proc/self/pagemap fails at once naming the bound; 9 in parallel leave room for a 10th read", async () => {
    const reads = Array.from({ length: 9 }, () =>
      sandbox.readFile("/workspace/p", LINES).then(
        () => "read",
        (err: Error) => [err.constructor.name, err.message],
      ),
    );
    const ordinary = sandbox.readFile("/workspace/a.txt", LINES);
    const outcomes = await Promise.all(reads);
    const read = await ordinary;
    // gVisor (Docker's runsc, the RuntimeClass gvisor) has no pagemap: the link dangles there.
    const gvisor = ["runsc", "gvisor"].includes(sandbox.info.runtime);
    const expected = gvisor
      ? [NotFoundError.name, "No such file or directory in the sandbox: /workspace/p"]
      : [InvalidArgumentError.name, pagemapError("/workspace/p")];
    expect(outcomes).toEqual(Array(9).fill(expected));
    expect([read.data.toString(), read.totalLines]).toEqual(["hello\n", 1]);
  });

  it("a link to /dev/zero is refused at open; a small pseudo file (/proc/self/status) still reads whole", async () => {
    await expect(sandbox.readFile("/workspace/z", LINES)).rejects.toThrow(
      new InvalidArgumentError("reading /workspace/z: /workspace/z is not a regular file."),
    );
    const status = await sandbox.readFile("/workspace/s", { ...LINES, maxLines: 1 });
    expect(status.data.toString()).toMatch(/^Name:\t/);
    expect(status.totalLines).toBeGreaterThan(10);
  });
});

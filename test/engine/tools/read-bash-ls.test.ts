/**
 * read, bash and ls against a real engine, through the tools (public faults 12, 15, 16, 18, 19, 20,
 * 22, 23, 26). Spill files go to a host store separate from the sandbox.
 */
import { existsSync, readFileSync, statSync } from "node:fs";
import { afterAll, beforeAll, expect, it } from "vitest";
import type { Sandbox } from "../../../src/sandbox/types.js";
import { createSpillStore, type HostSpillStore } from "../../../src/session/spill-store.js";
import { type BashToolDetails, createBashTool } from "../../../src/tools/bash.js";
import { CommandFailedError } from "../../../src/tools/command-error.js";
import { createLsTool } from "../../../src/tools/ls.js";
import { createReadTool } from "../../../src/tools/read.js";
import type { ToolContent, ToolOutput } from "../../../src/tools/types.js";
import { omitUndefined } from "../../../src/util/index.js";
import {
  backendLeftovers,
  createTestSandbox,
  describeBackend,
  killSandboxBehindItsBack,
} from "../../helpers/backend.js";
import { liveBytes } from "../../helpers/live-memory.js";
import { beating, stillBeating } from "../../helpers/survivors.js";

const TENANT = "test-tools-rbl";
const MiB = 1024 * 1024;
const PNG_1X1 = Buffer.from(
  "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==",
  "base64",
);
const text = (content: ToolContent[]) => (content[0]?.type === "text" ? content[0].text : "");
const bashTool = createBashTool();
const readTool = createReadTool();
const lsTool = createLsTool();

function tools(sandbox: Sandbox, spill: HostSpillStore) {
  const ctx = { sandbox, spill };
  return {
    bash: (command: string, timeout?: number) =>
      bashTool.execute("c", omitUndefined({ command, timeout }), ctx) as Promise<ToolOutput<BashToolDetails>>,
    /** Runs bash expecting failure; returns the CommandFailedError. */
    bashFails: async (command: string, timeout?: number) => {
      const err = await bashTool.execute("c", omitUndefined({ command, timeout }), ctx).then(
        () => new Error(`expected '${command}' to fail`),
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(CommandFailedError);
      return err as CommandFailedError<BashToolDetails>;
    },
    read: (path: string, offset?: number, limit?: number) =>
      readTool.execute("c", omitUndefined({ path, offset, limit }), ctx),
    ls: (path?: string) => lsTool.execute("c", omitUndefined({ path }), ctx),
  };
}

describeBackend("read, bash and ls tools in a real sandbox", () => {
  let sandbox: Sandbox;
  let spill: HostSpillStore;
  let t: ReturnType<typeof tools>;

  beforeAll(async () => {
    sandbox = await createTestSandbox({ tenant: TENANT });
    spill = createSpillStore({ sessionId: sandbox.info.sessionId });
    t = tools(sandbox, spill);
  });
  afterAll(async () => {
    await spill?.dispose();
    await sandbox?.destroy();
  });

  it("case 12: read shows a tab-indented file with literal U+0009", async () => {
    await t.bash("printf 'f() {\\n\\treturn 1\\n}\\n' > t.go");
    const out = await t.read("t.go");
    expect(text(out.content)).toBe("f() {\n\treturn 1\n}\n");
  });

  it("case 15: 20,000 '€' (a 60,000-byte line) shows valid UTF-8 <= 51,200 bytes from a whole '€'", async () => {
    const out = await t.bash("printf '€%.0s' $(seq 1 20000)");
    const shown = Buffer.from(text(out.content).split("\n\n[")[0]!);
    expect(shown.length).toBe(51_198);
    expect(shown[0]).toBe(0xe2);
    expect(shown.toString()).toBe("€".repeat(17_066));
    const path = out.details!.fullOutputPath!;
    expect(text(out.content)).toContain(
      `[Showing last 50.0KB of line 1 (line is 58.6KB). Full output: ${path}]`,
    );
    expect(readFileSync(spill.hostPathOf(path)!).equals(Buffer.from("€".repeat(20_000)))).toBe(true);
  });

  it("case 15: 8000 red 'ab' (88 KB of ANSI) come back with no orphan '31m' and no ESC", async () => {
    const out = await t.bash("for i in $(seq 1 8000); do printf '\\033[31mab\\033[0m'; done");
    expect(text(out.content)).toBe("ab".repeat(8000));
  });

  it("case 16: invalid bytes and NUL are replaced with a notice; /bin/ls bytes do not crash; read refuses binaries", async () => {
    const out = await t.bash("printf 'ok\\xff\\xfe\\x00end\\n'");
    expect(text(out.content)).toBe(
      "ok\uFFFD\uFFFD\uFFFDend\n\n\n[3 invalid UTF-8 or NUL bytes replaced with U+FFFD]",
    );
    const elf = await t.bash("head -c 4096 /bin/ls");
    const json = JSON.stringify(elf);
    expect(json).not.toContain("\\u0000");
    expect(elf.details!.replacedBytes).toBeGreaterThan(0);
    expect(text(elf.content)).toMatch(/\[\d+ invalid UTF-8 or NUL bytes replaced with U\+FFFD\]$/);
    await t.bash("cp /bin/ls ./ls.bin");
    await expect(t.read("ls.bin")).rejects.toThrow(/binary file/);
    await sandbox.writeFile("logo.png", PNG_1X1);
    const img = await t.read("logo.png");
    expect(img.content[1]).toEqual({
      type: "image",
      data: PNG_1X1.toString("base64"),
      mimeType: "image/png",
    });
  });

  it("case 19: background children holding the pipe do not hang the bash tool; none are left", async () => {
    // The background loops never end: a call that waited for them would time out after 30 s.
    expect(text((await t.bash(`${beating("c19")} & echo done`, 30)).content)).toBe("done\n");
    const b = await t.bash("(while :; do echo t; : > /tmp/beat-c19; sleep 0.2; done) & echo started", 30);
    expect(text(b.content)).toMatch(/^(t\n)?started\n/);
    expect(b.details).toMatchObject({ exitCode: 0, timedOut: false });
    expect(text((await t.bash(stillBeating("c19"))).content)).toBe("gone\n");
  });

  it("case 20: the bash tool reports a timeout as 'timed out', exit 124 (`sleep 300` outlasts the test: only the kill ends it)", async () => {
    const err = await t.bashFails(`echo partial; (trap '' TERM; ${beating("c20")}) & sleep 300`, 2);
    // bash itself may report the killed job ("Terminated") before warden's status line.
    expect(err.message.startsWith("partial\n")).toBe(true);
    expect(err.message.endsWith("\n\nCommand timed out after 2 seconds")).toBe(true);
    expect(err.details).toMatchObject({ exitCode: 124, timedOut: true });
    expect(text((await t.bash(stillBeating("c20"))).content)).toBe("gone\n");
  });

  it("case 22: exit 3, SIGKILL (137, never success), 127, and 'false | true' succeeds", async () => {
    expect((await t.bashFails("exit 3")).message).toBe("(no output)\n\nCommand exited with code 3");
    const killed = await t.bashFails("kill -9 $$");
    // The status is 137 (128 + SIGKILL), an error. On the docker-exec path the wrapper's shell also
    // prints "Killed"; warden-helper (the channel) runs bash directly, as Pi does, so nothing is printed.
    expect(killed.message).toBe(
      sandbox.info.execPath === "docker-exec"
        ? "Killed\n\n\nCommand exited with code 137"
        : "(no output)\n\nCommand exited with code 137",
    );
    expect(killed.details.exitCode).toBe(137);
    const missing = await t.bashFails("no_such_cmd");
    expect(missing.message).toBe(
      "bash: line 1: no_such_cmd: command not found\n\n\nCommand exited with code 127",
    );
    expect(text((await t.bash("false | true")).content)).toBe("(no output)");
  });

  it("case 23: no frame headers; stdout and stderr merged; the spill file is exactly 200,000 'a'", async () => {
    const out = await t.bash("echo out1; echo err1 >&2; echo out2");
    const shown = text(out.content);
    expect(shown.split("\n").sort()).toEqual(["", "err1", "out1", "out2"]);
    expect(shown).not.toMatch(/[\x01\x02]\x00\x00\x00/);
    const big = await t.bash("head -c 200000 /dev/zero | tr '\\0' a");
    expect(readFileSync(spill.hostPathOf(big.details!.fullOutputPath!)!, "utf8")).toBe("a".repeat(200_000));
    expect(text(big.content)).not.toMatch(/[\x01\x02]\x00\x00\x00/);
  });

  it("ls lists dotfiles and directories the Pi way", async () => {
    await t.bash("mkdir -p lsdir/Sub && touch lsdir/.hidden lsdir/b lsdir/A");
    expect(text((await t.ls("lsdir")).content)).toBe(".hidden\nA\nb\nSub/");
  });
});

describeBackend("case 18: reading a huge file", () => {
  // 2 GiB lives in the tmpfs workspace (RAM); 512 MiB keeps the test quick and honest: the tool reads
  // only the requested lines, so its cost does not grow with the file beyond the line count (wc -l).
  const FILE_BYTES = 512 * MiB;
  let sandbox: Sandbox;
  let spill: HostSpillStore;

  beforeAll(async () => {
    sandbox = await createTestSandbox({
      tenant: TENANT,
      limits: { workspaceBytes: FILE_BYTES + 64 * MiB, memoryBytes: FILE_BYTES + 512 * MiB },
    });
    spill = createSpillStore({ sessionId: sandbox.info.sessionId });
  });
  afterAll(async () => {
    await spill?.dispose();
    await sandbox?.destroy();
  });

  it("case 18: read of a 512 MiB file returns 2000 lines with a continuation offset, fast, with bounded memory", async () => {
    // Count what the tool pulls out of the sandbox: it must be the shown lines, not the file.
    let bytesRead = 0;
    const counting: Sandbox = Object.create(sandbox, {
      readFile: {
        value: async (...args: Parameters<Sandbox["readFile"]>) => {
          const r = await sandbox.readFile(...args);
          bytesRead += r.data.length;
          return r;
        },
      },
    });
    const t = tools(counting, spill);
    await t.bash(`yes abcdefghijklmnop | head -c ${FILE_BYTES} > big.log; echo one > small.log`, 120);
    const totalLines = FILE_BYTES / 17;
    const liveBefore = liveBytes();
    bytesRead = 0;
    const all = await t.read("big.log");
    expect(text(all.content)).toBe(
      `${"abcdefghijklmnop\n".repeat(2000).slice(0, -1)}\n\n[Showing lines 1-2000 of ${Math.ceil(totalLines)}. Use offset=2001 to continue.]`,
    );
    const five = await t.read("big.log", undefined, 5);
    expect(text(five.content)).toBe(
      `${"abcdefghijklmnop\n".repeat(5).slice(0, -1)}\n\n[${Math.ceil(totalLines) - 5} more lines in file. Use offset=6 to continue.]`,
    );
    // What is read, not how long it takes (speed is `npm run bench`'s): 2000 lines + 1 look-ahead
    // line (2001 x 17 bytes); then a 4096-byte sniff and 5 lines (85 bytes).
    expect(bytesRead).toBe(34_017 + 4096 + 85);
    expect(liveBytes() - liveBefore).toBeLessThan(16 * MiB);
  }, 300_000);
});

describeBackend("case 26: full disk and spill files", () => {
  let sandbox: Sandbox;
  let spill: HostSpillStore;

  beforeAll(async () => {
    sandbox = await createTestSandbox({ tenant: TENANT, limits: { workspaceBytes: 64 * MiB } });
    spill = createSpillStore({ sessionId: sandbox.info.sessionId });
  });
  afterAll(async () => {
    await spill?.dispose();
    await sandbox?.destroy();
    expect(await backendLeftovers(TENANT)).toEqual([]);
  });

  it("case 26: seq 1 3000 spills all lines to a 0600 file on separate storage that survives a full workspace", async () => {
    const t = tools(sandbox, spill);
    const seq = await t.bash("seq 1 3000");
    const handle = seq.details!.fullOutputPath!;
    const all = Array.from({ length: 3000 }, (_, i) => `${i + 1}\n`).join("");
    expect(text(seq.content)).toBe(
      `${all.slice(all.indexOf("1001\n"))}\n\n[Showing lines 1001-3000 of 3000. Full output: ${handle}]`,
    );
    const path = spill.hostPathOf(handle)!;
    expect(readFileSync(path, "utf8")).toBe(all);
    expect(statSync(path).mode & 0o777).toBe(0o600);
    // The model can read the spill file back by its handle through the read tool of the same session.
    expect(text((await t.read(handle, 2999)).content)).toBe("2999\n3000\n");

    const dd = await t.bashFails("dd if=/dev/zero of=/workspace/fill bs=1M count=1000000", 120);
    expect(dd.message).toMatch(/No space left on device/);
    expect(text((await t.bash("echo ok")).content)).toBe("ok\n");
    const again = await t.bash("seq 1 3000");
    const againPath = spill.hostPathOf(again.details!.fullOutputPath!)!;
    expect(readFileSync(againPath, "utf8")).toBe(all);

    await spill.dispose();
    expect(existsSync(path)).toBe(false);
    expect(existsSync(againPath)).toBe(false);
  });

  it("case 22: once the container is stopped, bash returns a runtime error, not a success", async () => {
    await killSandboxBehindItsBack(sandbox);
    const err = await bashTool.execute("c", { command: "true" }, { sandbox, spill }).then(
      () => null,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(Error);
    expect(err).not.toBeInstanceOf(CommandFailedError);
  });
});

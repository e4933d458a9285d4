import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createSpillStore, type HostSpillStore } from "../../../src/session/spill-store.js";
import { type BashToolDetails, createBashTool } from "../../../src/tools/bash.js";
import { CommandFailedError } from "../../../src/tools/command-error.js";
import type { SpillStore, SpillSummary, ToolContent, ToolOutput } from "../../../src/tools/types.js";
import { emitting, FakeSandbox } from "../../helpers/fake-sandbox.js";

let sandbox: FakeSandbox;
let spill: HostSpillStore;
let spillParent: string;
const bash = createBashTool();
const text = (content: ToolContent[]) => (content[0]?.type === "text" ? content[0].text : "");
const run = (command: string, timeout?: number, onUpdate?: (p: ToolOutput) => void) =>
  bash.execute("call-1", { command, timeout }, { sandbox, spill, onUpdate });
const failure = async (p: Promise<unknown>) => {
  const err = await p.then(
    () => {
      throw new Error("expected the command to fail");
    },
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(CommandFailedError);
  return err as CommandFailedError<BashToolDetails>;
};

beforeEach(async () => {
  sandbox = await FakeSandbox.create();
  spillParent = mkdtempSync(join(tmpdir(), "warden-bash-spill-"));
  spill = createSpillStore({ dir: spillParent, sessionId: "bash" });
});
afterEach(async () => {
  await sandbox.destroy();
  await spill.dispose();
  rmSync(spillParent, { recursive: true, force: true });
});

describe("bash tool", () => {
  it("runs the command with bash -c, returns its output, deletes the uncut spill file", async () => {
    sandbox.execScript = emitting(["hello\n"]);
    const out = await run("echo hello");
    expect(sandbox.commands).toEqual([{ shell: "echo hello" }]);
    expect(text(out.content)).toBe("hello\n");
    expect(out.details).toEqual({ exitCode: 0, timedOut: false, aborted: false, durationMs: 1 });
    expect(readdirSync(spill.dir!)).toEqual([".owner"]); // only the owner file (spill-sweep.ts)
  });

  it("a command over 131071 bytes is refused naming the limit, before anything runs (it would fail with E2BIG)", async () => {
    await expect(run(`echo ${"x".repeat(131_071 - 5)}`)).resolves.toBeDefined();
    const tooLong = `echo ${"€".repeat(43_690)}`; // 5 + 3 × 43690 = 131075 bytes
    await expect(run(tooLong)).rejects.toThrow(
      "bash command is 131075 bytes, over the 131071 bytes one command can have (Linux's limit for one " +
        "argument). Split it into shorter commands, or write long content with the write tool. Nothing was run.",
    );
    expect(sandbox.commands).toHaveLength(1);
  });

  it("'(no output)' when empty", async () => {
    expect(text((await run("true")).content)).toBe("(no output)");
  });

  it("passes the timeout in ms and the signal to exec", async () => {
    let seen: unknown;
    sandbox.execScript = async (_c, opts) => {
      seen = opts.timeoutMs;
      return { exitCode: 0, timedOut: false, aborted: false, durationMs: 1 };
    };
    await run("true", 2.5);
    expect(seen).toBe(2500);
  });

  it("case 22: exit 3 -> Pi's message 'output + blank + Command exited with code 3'", async () => {
    sandbox.execScript = emitting(["oops\n"], { exitCode: 3 });
    const err = await failure(run("echo oops; exit 3"));
    expect(err.message).toBe("oops\n\n\nCommand exited with code 3");
    expect(err.code).toBe("COMMAND_FAILED");
    expect(err.details.exitCode).toBe(3);
  });

  it("case 22: a process killed by SIGKILL (137) fails; Pi counted a killed process (null code) as success", async () => {
    sandbox.execScript = emitting([], { exitCode: 137 });
    const err = await failure(run("kill -9 $$"));
    expect(err.message).toBe("(no output)\n\nCommand exited with code 137");
  });

  it("case 20 (unit): a timeout reports 'Command timed out after N seconds', exit 124, partial output", async () => {
    sandbox.execScript = emitting(["partial\n"], { exitCode: 124, timedOut: true });
    const err = await failure(run("sleep 300", 2));
    expect(err.message).toBe("partial\n\n\nCommand timed out after 2 seconds");
    expect(err.code).toBe("TIMEOUT");
    expect(err.details).toMatchObject({ exitCode: 124, timedOut: true });
  });

  it("abort reports 'Command aborted' with the partial output", async () => {
    sandbox.execScript = emitting(["so far"], { exitCode: 130, aborted: true });
    const err = await failure(run("sleep 300"));
    expect(err.message).toBe("so far\n\nCommand aborted");
    expect(err.code).toBe("ABORTED");
  });

  it("case 26 (unit): seq 1 3000 shows 1001-3000 and the footer names a 0600 spill file with all 3000 lines", async () => {
    const all = Array.from({ length: 3000 }, (_, i) => `${i + 1}\n`).join("");
    sandbox.execScript = emitting([all.slice(0, 5000), all.slice(5000)]);
    const out = await run("seq 1 3000");
    const details = out.details as BashToolDetails;
    const handle = details.fullOutputPath!;
    expect(handle).toMatch(/^\/spill\/bash-[0-9a-f]{8}\.log$/);
    expect(text(out.content)).toBe(
      `${all.slice(all.indexOf("1001\n"))}\n\n[Showing lines 1001-3000 of 3000. Full output: ${handle}]`,
    );
    const path = spill.hostPathOf(handle)!;
    expect(readFileSync(path, "utf8")).toBe(all);
    expect(statSync(path).mode & 0o777).toBe(0o600);
    expect(details.truncation?.truncatedBy).toBe("lines");
    await spill.dispose();
    expect(existsSync(path)).toBe(false);
  });

  it("case 15 (unit): a 60,000-byte line of '€' shows its last whole characters; the spill file has the exact bytes", async () => {
    const raw = Buffer.from("€".repeat(20_000));
    sandbox.execScript = emitting([raw.subarray(0, 7), raw.subarray(7, 40_001), raw.subarray(40_001)]);
    const out = await run("printf ...");
    const details = out.details as BashToolDetails;
    const shown = text(out.content).split("\n\n[")[0]!;
    expect(shown).toBe("€".repeat(17_066));
    expect(text(out.content)).toContain(
      `[Showing last 50.0KB of line 1 (line is 58.6KB). Full output: ${details.fullOutputPath}]`,
    );
    expect(readFileSync(spill.hostPathOf(details.fullOutputPath!)!).equals(raw)).toBe(true);
  });

  it("case 16 (unit): invalid bytes and NUL are replaced and counted in a notice; the spill keeps raw bytes", async () => {
    sandbox.execScript = emitting([Buffer.from([0x6f, 0x6b, 0xff, 0xfe, 0x00, 0x65, 0x6e, 0x64, 0x0a])]);
    const out = await run("printf 'ok\\xff\\xfe\\x00end\\n'");
    expect(text(out.content)).toBe(
      "ok\uFFFD\uFFFD\uFFFDend\n\n\n[3 invalid UTF-8 or NUL bytes replaced with U+FFFD]",
    );
    expect(JSON.parse(JSON.stringify(out)).content[0].text).not.toContain("\u0000");
    expect((out.details as BashToolDetails).replacedBytes).toBe(3);
  });

  it("sends live updates with the current tail, throttled", async () => {
    const updates: string[] = [];
    sandbox.execScript = async (_c, opts) => {
      opts.onStdout?.(Buffer.from("one\n"));
      await new Promise((r) => setTimeout(r, 150));
      opts.onStdout?.(Buffer.from("two\n"));
      opts.onStdout?.(Buffer.from("three\n"));
      await new Promise((r) => setTimeout(r, 150));
      return { exitCode: 0, timedOut: false, aborted: false, durationMs: 300 };
    };
    await run("x", undefined, (p) => updates.push(text(p.content)));
    expect(updates).toEqual(["one\n", "one\ntwo\n", "one\ntwo\nthree\n"]);
  });

  it("the footer names a /spill/ handle, never the host path", async () => {
    sandbox.execScript = emitting(["x\n".repeat(3000)]);
    const out = await run("yes x | head -n 3000");
    const handle = (out.details as BashToolDetails).fullOutputPath!;
    expect(text(out.content).endsWith(`[Showing lines 1001-3000 of 3000. Full output: ${handle}]`)).toBe(
      true,
    );
    expect(JSON.stringify(out)).not.toContain(spillParent);
    expect(JSON.stringify(out)).not.toContain(tmpdir());
  });

  it("past the session spill cap the file keeps the first bytes and the footer says what was kept and how to raise the cap", async () => {
    const capped = createSpillStore({
      dir: spillParent,
      sessionId: "capped",
      maxBytes: 100_000,
      maxBytesHint: "--spill-max-bytes",
    });
    const all = Array.from({ length: 30_000 }, (_, i) => `${i + 1}\n`).join(""); // 168,894 bytes
    sandbox.execScript = emitting([all.slice(0, 60_000), all.slice(60_000)]);
    const out = await bash.execute("call-1", { command: "seq 1 30000" }, { sandbox, spill: capped });
    const details = out.details as BashToolDetails;
    const handle = details.fullOutputPath!;
    expect(text(out.content)).toBe(
      `${all.slice(all.indexOf("28001\n"))}\n\n[Showing lines 28001-30000 of 30000. Full output not kept: the session's ` +
        `spill files reached their 97.7KB cap, so ${handle} holds only its first 97.7KB of 164.9KB (raise the cap with --spill-max-bytes)]`,
    );
    expect(details.spill).toEqual({
      handle,
      keptBytes: 100_000,
      totalBytes: 168_894,
      cappedBy: { scope: "session", limitBytes: 100_000, raiseHint: "--spill-max-bytes" },
    });
    expect(readFileSync(capped.hostPathOf(handle)!, "utf8")).toBe(all.slice(0, 100_000));
    // The cap is used up: the next cut output keeps nothing, and the result says so without a handle.
    const again = await bash.execute("call-2", { command: "seq 1 30000" }, { sandbox, spill: capped });
    const shown = text(again.content);
    expect(shown.slice(shown.lastIndexOf("\n[") + 1)).toBe(
      "[Showing lines 28001-30000 of 30000. Full output not kept: the session's spill files reached their 97.7KB cap, " +
        "so none of it was kept (raise the cap with --spill-max-bytes)]",
    );
    expect((again.details as BashToolDetails).fullOutputPath).toBeUndefined();
    expect(readdirSync(capped.dir!).length).toBe(2); // .owner and the first file
    await capped.dispose();
  });

  it("a host write error that stopped the spill file early is named in the footer, with what was kept", async () => {
    const summary: SpillSummary = {
      handle: "/spill/bash-0000abcd.log",
      keptBytes: 20_480,
      totalBytes: 168_894,
      error: "ENOSPC: no space left on device, write",
    };
    const failing: SpillStore = {
      create: async () => ({
        handle: summary.handle,
        write: () => undefined,
        summary: () => summary,
        close: async () => undefined,
        discard: async () => undefined,
      }),
      owns: () => false,
      read: () => Promise.reject(new Error("unused")),
      dispose: async () => undefined,
    };
    sandbox.execScript = emitting([Array.from({ length: 30_000 }, (_, i) => `${i + 1}\n`).join("")]);
    const out = await bash.execute("call-1", { command: "seq 1 30000" }, { sandbox, spill: failing });
    const shown = text(out.content);
    expect(shown.slice(shown.lastIndexOf("\n[") + 1)).toBe(
      "[Showing lines 28001-30000 of 30000. Full output not kept: writing the spill file failed " +
        "(ENOSPC: no space left on device, write), so /spill/bash-0000abcd.log holds only its first 20.0KB of 164.9KB]",
    );
    expect(out.details).toMatchObject({ fullOutputPath: summary.handle, spill: summary });
  });

  it("an engine failure is rethrown and leaves no spill file", async () => {
    sandbox.execScript = async () => {
      throw new Error("container gone");
    };
    await expect(run("true")).rejects.toThrow("container gone");
    expect(readdirSync(spill.dir!)).toEqual([".owner"]); // only the owner file (spill-sweep.ts)
  });
});

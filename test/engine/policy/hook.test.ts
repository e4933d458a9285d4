/**
 * The policy hook in a real session (copy mode): refused calls never run (public faults 5 and 6),
 * allowed ones do. Issue 4's done-when: `git status && rm -rf src` is refused naming the rm rule
 * and src is untouched.
 */
import { randomBytes } from "node:crypto";
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { createPolicyHookFromFiles } from "../../../src/policy/index.js";
import { createSession } from "../../../src/session/index.js";
import type { Session } from "../../../src/session/types.js";
import type { ToolResultMessage } from "../../../src/tools/types.js";
import { describeEngine } from "../../helpers/engine.js";

const tenant = `test-policy-${randomBytes(3).toString("hex")}`;
const defaultPolicy = new URL("../../../policies/default.yaml", import.meta.url).pathname;
const text = (r: ToolResultMessage | undefined) => (r?.content[0]?.type === "text" ? r.content[0].text : "");

describeEngine("policy hook in a real session", () => {
  let session: Session;

  beforeAll(async () => {
    const dir = mkdtempSync(join(tmpdir(), "warden-policy-ws-"));
    mkdirSync(join(dir, "src"));
    writeFileSync(join(dir, "src/a.txt"), "keep me\n");
    const hook = await createPolicyHookFromFiles([defaultPolicy], {
      sessionId: "policy-engine",
      nonInteractive: true,
    });
    session = await createSession({
      tenant,
      sandbox: { workspace: { hostPath: dir, mode: "copy" } },
      beforeToolCall: [hook],
    });
  });
  afterAll(async () => {
    await session?.close();
  });

  const bash = async (command: string) => {
    const [result] = await session.runToolCalls([{ id: "c1", name: "bash", arguments: { command } }]);
    return result;
  };

  it("case 5: `git status && rm -rf src` is refused naming the rm rule, and src is untouched", async () => {
    for (const command of [
      "git status && rm -rf src",
      "git status\nrm -rf src",
      "git status $(rm -rf src)",
    ]) {
      const result = await bash(command);
      expect(result?.isError).toBe(true);
      expect(text(result)).toContain("rule 'deny-rm'");
      expect(text(result)).toContain("Nothing was run.");
    }
    const piped = await bash("git status | sh");
    expect(piped?.isError).toBe(true);
    expect(text(piped)).toContain("sh reads commands from stdin");
    expect(await session.sandbox.stat("/workspace/src/a.txt")).toMatchObject({ type: "file", size: 8 });
  });

  it("case 6: `X=$(touch /workspace/p) npm --version` is not run and /workspace/p does not exist", async () => {
    const result = await bash("X=$(touch /workspace/p) npm --version");
    expect(result?.isError).toBe(true);
    expect(text(result)).toContain("'touch /workspace/p'");
    expect(await session.sandbox.stat("/workspace/p")).toBeNull();
  });

  it("the spill handle a cut bash result names can be read (rule allow-spill-read), not asked about", async () => {
    const cut = await bash("seq 1 3000");
    const handle = /Full output: (\/spill\/bash-[0-9a-f]{8}\.log)\]$/.exec(text(cut))?.[1];
    expect(handle).toBeDefined();
    const [read] = await session.runToolCalls([
      { id: "c2", name: "read", arguments: { path: handle, offset: 2999 } },
    ]);
    expect({ isError: read?.isError, text: text(read) }).toEqual({ isError: false, text: "2999\n3000\n" });
  });

  it("an allowed command runs", async () => {
    const result = await bash("ls src");
    expect(result?.isError).toBe(false);
    expect(text(result)).toContain("a.txt");
  });
});

/** `warden exec` and `warden replay`, run in-process against the real engine, and the demo transcript. */
import { chmod, mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { previewText } from "../../../src/agent/render/format-result.js";
import { parseExecArguments } from "../../../src/cli/commands/exec.js";
import { sessionOptionsOf, toolSelectionOf } from "../../../src/cli/flags/session-flags.js";
import type { ToolResultMessage } from "../../../src/tools/types.js";
import { DEFAULT_POLICY_NOTICE } from "../../helpers/cli-policy.js";
import { warden } from "../../helpers/cli-run.js";
import { describeEngine } from "../../helpers/engine.js";

const TENANT = ["--tenant", "test-cli"];

describeEngine("warden exec", () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "warden-cli-"));
    // Copy-mode sessions that change files save their patch under $WARDEN_HOME/runs.
    vi.stubEnv("WARDEN_HOME", join(dir, ".warden-home"));
    // rw mode: the sandbox user (uid 1000) must be able to write the bind-mounted host directory.
    await chmod(dir, 0o777);
    await writeFile(join(dir, "a.txt"), "hello\n");
  });
  afterAll(async () => {
    vi.unstubAllEnvs();
    await rm(dir, { recursive: true, force: true });
  });

  it("prints the result text and exits 0; without --policy the default policy applies, said on stderr", async () => {
    const run = await warden(["exec", "read", '{"path":"a.txt"}', "--workspace", dir, ...TENANT]);
    expect(run).toEqual({ stdout: "hello\n", stderr: DEFAULT_POLICY_NOTICE, exitCode: 0 });
  });

  it("prints the ToolResultMessage with --json; copy mode leaves the host file alone", async () => {
    const run = await warden([
      "exec",
      "edit",
      '{"path":"a.txt","edits":[{"oldText":"hello","newText":"bye"}]}',
      "--workspace",
      dir,
      "--json",
      ...TENANT,
    ]);
    expect(run.exitCode).toBe(0);
    const message = JSON.parse(run.stdout) as ToolResultMessage<{ diff: string }>;
    expect(message).toMatchObject({
      role: "toolResult",
      toolCallId: "exec-1",
      toolName: "edit",
      isError: false,
      content: [{ type: "text", text: "Successfully replaced 1 block(s) in a.txt." }],
    });
    expect(message.details?.diff).toBe("-1 hello\n+1 bye");
    expect(await readFile(join(dir, "a.txt"), "utf8")).toBe("hello\n");
  });

  it("writes the host directory in rw mode", async () => {
    const run = await warden([
      "exec",
      "write",
      '{"path":"new/b.txt","content":"B"}',
      "-w",
      dir,
      "-m",
      "rw",
      ...TENANT,
    ]);
    expect(run.exitCode).toBe(0);
    expect(await readFile(join(dir, "new/b.txt"), "utf8")).toBe("B");
  });

  it("exits 1 for an error result and prints it on stderr", async () => {
    const run = await warden(["exec", "read", '{"path":"nope.txt"}', "--workspace", dir, ...TENANT]);
    expect(run).toEqual({
      stdout: "",
      stderr: `${DEFAULT_POLICY_NOTICE}File not found: nope.txt\n`,
      exitCode: 1,
    });
  });

  it("exits 2 for a disabled or unknown tool, naming it as such and listing the enabled tools", async () => {
    const run = await warden(["exec", "bash", '{"command":"true"}', "--exclude-tools", "bash", ...TENANT]);
    expect(run).toEqual({
      stdout: "",
      stderr:
        DEFAULT_POLICY_NOTICE +
        "InvalidArgumentError: Tool bash is disabled in this session (--tools, --exclude-tools, --no-tools or --no-builtin-tools); enabled tools: read, edit, write, grep, find, ls.",
      exitCode: 2,
    });
    const cat = await warden(["exec", "cat", "{}", ...TENANT]);
    expect(cat.stderr).toBe(
      `${DEFAULT_POLICY_NOTICE}InvalidArgumentError: Unknown tool 'cat'. Enabled tools: read, bash, edit, write, grep, find, ls. A shell command goes through bash: warden exec bash '{"command":"cat …"}'.`,
    );
  });

  it("applies --policy files as a beforeToolCall hook: a denied call is an error result and nothing runs", async () => {
    const policy = join(dir, "policy.yaml");
    await writeFile(
      policy,
      "default: allow\nrules:\n  - id: no-rm\n    decision: deny\n    tools: [bash]\n    commands: [rm]\n",
    );
    const run = await warden([
      "exec",
      "bash",
      '{"command":"touch made && rm -rf made"}',
      "-w",
      dir,
      "-m",
      "rw",
      "--policy",
      policy,
      ...TENANT,
    ]);
    expect(run.exitCode).toBe(1);
    expect(run.stderr).toContain("rule 'no-rm'");
    expect(await readFile(join(dir, "made")).catch(() => "absent")).toBe("absent");
  });

  it("issue 4: `exec --policy policies/default.yaml bash '{git status && rm -rf src}'` is refused by deny-rm, src intact", async () => {
    const ws = await mkdtemp(join(tmpdir(), "warden-cli-policy-"));
    await writeFile(join(ws, "keep.txt"), "x");
    await mkdir(join(ws, "src"));
    await writeFile(join(ws, "src", "a.ts"), "export {};\n");
    // --policy before the tool name: the option takes one file, not the rest of the command line.
    const run = await warden([
      "exec",
      "--policy",
      "policies/default.yaml",
      "bash",
      '{"command":"git status && rm -rf src"}',
      "-w",
      ws,
      "-m",
      "rw",
      ...TENANT,
    ]);
    expect(run.exitCode).toBe(1);
    expect(run.stderr).toContain("bash part 'rm -rf src' is denied by rule 'deny-rm'");
    expect(await readFile(join(ws, "src", "a.ts"), "utf8")).toBe("export {};\n");
    await rm(ws, { recursive: true, force: true });
  });

  it("exits 2 for arguments that are not a JSON object, before creating a session", async () => {
    const run = await warden(["exec", "ls", "[1]", ...TENANT]);
    expect(run.exitCode).toBe(2);
    expect(run.stderr).toContain("Tool arguments must be a JSON object, got [1].");
  });

  it("--spill-max-bytes caps the spill file; the result names the handle, what was kept and the flag", async () => {
    const run = await warden([
      "exec",
      "bash",
      '{"command":"seq 1 3000"}',
      "--spill-max-bytes",
      "1k",
      ...TENANT,
    ]);
    expect(run.exitCode).toBe(0);
    expect(run.stdout.slice(run.stdout.lastIndexOf("\n[") + 1)).toMatch(
      /^\[Showing lines 1001-3000 of 3000\. Full output not kept: the session's spill files reached their 1\.0KB cap, so \/spill\/bash-[0-9a-f]{8}\.log holds only its first 1\.0KB of 13\.6KB \(raise the cap with --spill-max-bytes\)\]\n?$/,
    );
    expect(run.stdout).not.toContain(tmpdir());
    const bad = await warden(["exec", "ls", "{}", "--spill-max-bytes", "lots", ...TENANT]);
    expect(bad.exitCode).toBe(2);
    expect(bad.stderr).toContain(
      "--spill-max-bytes must be a number of bytes, optionally with k, m or g (e.g. 268435456 or 256m), got 'lots'.",
    );
  });
});

describeEngine("warden replay", () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "warden-replay-"));
    vi.stubEnv("WARDEN_HOME", join(dir, ".warden-home"));
  });
  afterAll(async () => {
    vi.unstubAllEnvs();
    await rm(dir, { recursive: true, force: true });
  });

  it("replays the demo transcript: every result right, the host workspace untouched", async () => {
    const out = join(dir, "results.jsonl");
    const before = await readFile("examples/workspace/notes/windows.txt");
    const run = await warden([
      "replay",
      "examples/demo-transcript.jsonl",
      "--workspace",
      "examples/workspace",
      "--out",
      out,
      ...TENANT,
    ]);
    expect(run.exitCode).toBe(0);
    expect(run.stdout).toContain("14 calls, 4 error results");
    expect(run.stderr.startsWith(DEFAULT_POLICY_NOTICE)).toBe(true);
    // Its changes (two edits and a write, in the sandbox's copy) are saved, never applied.
    expect(run.stderr).toMatch(
      /warden: the session changed 3 files in its copy of \/.*\/examples\/workspace \(the host is untouched\); patch saved to \/.*\.warden-home\/runs\/[^ ]+\.patch /,
    );
    const results = (await readFile(out, "utf8"))
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line) as ToolResultMessage);
    const byId = new Map(results.map((r) => [r.toolCallId, r]));
    const text = (id: string) => (byId.get(id)?.content[0] as { text: string } | undefined)?.text;
    expect(results.map((r) => r.toolCallId)).toEqual([
      "call_ls",
      "call_find",
      "call_read",
      "call_grep",
      "call_edit_go",
      "call_edit_crlf",
      "call_missing",
      "call_invalid",
      "call_escape",
      "call_write",
      "call_check",
      "call_fail",
      "call_seq",
      "call_spill",
    ]);
    expect(results.filter((r) => r.isError).map((r) => r.toolCallId)).toEqual([
      "call_missing",
      "call_invalid",
      "call_escape",
      "call_fail",
    ]);
    expect(text("call_ls")).toBe(".gitignore\nnotes/\nREADME.md\nsrc/");
    expect(text("call_find")).toBe("src/greet.py\nsrc/main.go");
    expect(text("call_read")).toContain(
      "func answer() int {\n\t// TODO: compute the real answer\n\treturn 1\n}",
    );
    expect((byId.get("call_edit_go")?.details as { diff?: string } | undefined)?.diff).toContain(
      "- 7 \treturn 1\n+ 7 \treturn 2",
    );
    expect(text("call_invalid")).toBe(
      "Validation failed for tool \"bash\":\n  - command: must have required property 'command'\n" +
        '  - timeout: must be number\n\nReceived arguments:\n{\n  "timeout": "soon"\n}',
    );
    // The default policy refuses it before path confinement would (a read outside /workspace asks).
    expect(text("call_escape")).toBe(
      "Tool call refused: read part '/etc/passwd' needs approval (rule 'default' (operator policy)) and this session is non-interactive, so it is denied. Nothing was run.",
    );
    expect(text("call_check")).toBe("ALPHA^M$\nBETA^M$\nanswer() now returns 2\nnotes capitalised\n");
    expect(text("call_seq")).toMatch(
      /^1001\n1002\n[\s\S]*\n3000\n+\[Showing lines 1001-3000 of 3000\. Full output: \/spill\/bash-[0-9a-f]{8}\.log\]$/,
    );
    expect(text("call_spill")).toBe("1\n2\n3\n\n[2997 more lines in file. Use offset=4 to continue.]");
    expect(await readFile("examples/workspace/notes/windows.txt")).toEqual(before);
    expect(await readFile("examples/workspace/src/main.go", "utf8")).toContain("\treturn 1\n");
  });

  const call = (id: string, name: string, args: string) => ({
    id,
    type: "function",
    function: { name, arguments: args },
  });
  /** Replays `turns` (one assistant line each) with `--out`; the results it wrote, in order. */
  const replayTurns = async (
    name: string,
    turns: ReturnType<typeof call>[][],
  ): Promise<ToolResultMessage[]> => {
    const transcript = join(dir, `${name}.jsonl`);
    const lines = turns.map((calls) => `${JSON.stringify({ role: "assistant", tool_calls: calls })}\n`);
    await writeFile(transcript, lines.join(""));
    const out = join(dir, `${name}-results.jsonl`);
    const run = await warden(["replay", transcript, "--out", out, ...TENANT]);
    expect(run.exitCode).toBe(0);
    return (await readFile(out, "utf8"))
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as ToolResultMessage);
  };
  const firstText = (r: ToolResultMessage) => (r.content[0] as { text: string }).text;

  it("makes a {{spill:id}} placeholder without a spill file an error result", async () => {
    const results = await replayTurns("spill", [
      [call("c1", "bash", '{"command":"echo small"}')],
      [call("c2", "read", '{"path":"{{spill:c1}}"}')],
    ]);
    expect(results.map((r) => [r.toolCallId, r.isError, firstText(r)])).toEqual([
      ["c1", false, "small\n"],
      ["c2", true, "{{spill:c1}}: no earlier call of this replay with that id produced a spill file."],
    ]);
  });

  it("runs no call of a turn whose tool-call ids repeat: each gets the duplicate-id error", async () => {
    const results = await replayTurns("dup", [
      [
        call("c1", "write", '{"path":"dup.txt","content":"x"}'),
        call("c1", "read", '{"path":"{{spill:nope}}"}'),
        call("c2", "bash", '{"command":"echo ran > ran.txt"}'),
      ],
      [call("c3", "bash", '{"command":"ls dup.txt ran.txt 2>&1; true"}')],
    ]);
    const refused =
      "Tool call id 'c1' appears more than once in this batch; every call of a batch needs its own id. " +
      "No call of the batch was run: re-issue the calls with distinct ids.";
    expect(results.map((r) => [r.toolCallId, r.toolName, r.isError, firstText(r)])).toEqual([
      ["c1", "write", true, refused],
      ["c1", "read", true, refused],
      ["c2", "bash", true, refused],
      [
        "c3",
        "bash",
        false,
        "ls: cannot access 'dup.txt': No such file or directory\nls: cannot access 'ran.txt': No such file or directory\n",
      ],
    ]);
  });

  it("exits 2 for a transcript line that is not JSON", async () => {
    const transcript = join(dir, "bad.jsonl");
    await writeFile(transcript, "{nope\n");
    const run = await warden(["replay", transcript, ...TENANT]);
    expect(run.exitCode).toBe(2);
    expect(run.stderr).toContain("Transcript line 1 is not valid JSON");
  });
});

describe("CLI helpers (no engine)", () => {
  it("maps Pi's tool flags to a ToolSelection", () => {
    expect(toolSelectionOf({ tools: "read, ls", excludeTools: "ls" })).toEqual({
      tools: ["read", "ls"],
      excludeTools: ["ls"],
    });
    expect(toolSelectionOf({ tools: false, builtinTools: false })).toEqual({
      noTools: true,
      noBuiltinTools: true,
    });
  });

  it("refuses --mode without --workspace", async () => {
    await expect(sessionOptionsOf({ mode: "rw" })).rejects.toThrow(
      "--mode needs --workspace <dir>: name the host directory to expose.",
    );
  });

  it("shortens long results on screen to the first and last 10 lines", () => {
    const text = `${Array.from({ length: 50 }, (_, i) => String(i + 1)).join("\n")}\n`;
    const lines = previewText(text).split("\n");
    expect(lines.length).toBe(21);
    expect(lines.slice(0, 2)).toEqual(["1", "2"]);
    expect(lines[10]).toContain("30 lines not shown");
    expect(lines.at(-1)).toBe("50");
    expect(previewText("a\nb\n")).toBe("a\nb");
  });

  it("accepts only a JSON object as exec arguments", () => {
    expect(parseExecArguments('{"path":"a"}')).toEqual({ path: "a" });
    expect(() => parseExecArguments('"a"')).toThrow('Tool arguments must be a JSON object, got "a".');
  });
});

/**
 * The bound on analysed bash commands (issue 11, item 2): a command over maxCommandBytes is refused
 * before it is parsed, with an error naming the limit and how to raise it; one at the limit is analysed.
 */
import { describe, expect, it } from "vitest";
import type { BeforeToolCallContext } from "../../../src/pipeline/types.js";
import {
  analyzeBash,
  CommandTooLongError,
  createPolicyHook,
  DEFAULT_MAX_COMMAND_BYTES,
  evaluate,
  lexicalContext,
  loadBashParser,
  MAX_SYNTAX_DEPTH,
  type Policy,
  parsePolicyText,
} from "../../../src/policy/index.js";
import type { AnyTool } from "../../../src/tools/types.js";
import { FakeSandbox } from "../../helpers/fake-sandbox.js";

const layer = (text: string, file = "limit.yaml") => parsePolicyText(text, file);
const allowAll = layer("default: allow\nrules: []\n");
const policy: Policy = { layers: [allowAll] };
const bash = (command: string) => ({ tool: "bash", args: { command } });

describe("maxCommandBytes", () => {
  it("defaults to 8 KiB: a command of exactly the limit is analysed, one byte more is refused", async () => {
    expect(DEFAULT_MAX_COMMAND_BYTES).toBe(8192);
    const atLimit = `echo ${"x".repeat(8192 - 5)}`;
    expect(await evaluate(policy, bash(atLimit), lexicalContext)).toMatchObject({
      decision: "allow",
      trail: [{ kind: "command", decision: "allow" }],
    });
    const over = `${atLimit}y`;
    const refused = evaluate(policy, bash(over), lexicalContext);
    await expect(refused).rejects.toBeInstanceOf(CommandTooLongError);
    await expect(refused).rejects.toMatchObject({
      code: "INVALID_ARGUMENT",
      message:
        "bash command is 8193 bytes, over the policy limit maxCommandBytes = 8192 bytes. Split it into " +
        "shorter commands, or write long content with the write tool; an operator can raise the limit " +
        "with `maxCommandBytes:` in a policy file (at most 131071, the longest command the sandbox can run).",
    });
  });

  it("counts UTF-8 bytes, not characters", async () => {
    const small: Policy = { layers: [layer("maxCommandBytes: 10\ndefault: allow\nrules: []\n")] };
    expect(await evaluate(small, bash("echo éé"), lexicalContext)).toMatchObject({ decision: "allow" });
    await expect(evaluate(small, bash("echo ééé"), lexicalContext)).rejects.toMatchObject({
      bytes: 11,
      limit: 10,
    });
  });

  it("the smallest limit of the layers applies; a layer may raise the default", async () => {
    const raised: Policy = { layers: [layer("maxCommandBytes: 100000\ndefault: allow\nrules: []\n")] };
    const long = `echo ${"x".repeat(50_000)}`;
    expect(await evaluate(raised, bash(long), lexicalContext)).toMatchObject({ decision: "allow" });
    const tightened: Policy = {
      layers: [raised.layers[0]!, layer("layer: project\nmaxCommandBytes: 20\nrules: []\n", "p.yaml")],
    };
    await expect(evaluate(tightened, bash("echo 123456789012345678"), lexicalContext)).rejects.toMatchObject({
      limit: 20,
    });
  });

  it("a policy file rejects a limit the sandbox could not run", () => {
    expect(() => layer("maxCommandBytes: 131072\nrules: []\n")).toThrow(
      "limit.yaml:1:18: maxCommandBytes: must be <= 131071",
    );
    expect(() => layer("maxCommandBytes: 0\nrules: []\n")).toThrow("limit.yaml:1:18: maxCommandBytes:");
  });

  it("the hook refuses an over-long command with the limit in the reason, without parsing it", async () => {
    const command = `true ${"#".repeat(900_000)}`;
    const hook = createPolicyHook({ policy, sessionId: "s1" });
    const ctx = {
      call: { id: "c1", name: "bash", arguments: { command } },
      tool: { name: "bash" } as AnyTool,
      args: { command },
      sandbox: new FakeSandbox(),
      sessionId: "s1",
    } satisfies BeforeToolCallContext;
    expect(await hook(ctx)).toEqual({
      block: true,
      reason:
        "Tool call refused: bash command is 900005 bytes, over the policy limit maxCommandBytes = 8192 " +
        "bytes. Split it into shorter commands, or write long content with the write tool; an operator can " +
        "raise the limit with `maxCommandBytes:` in a policy file (at most 131071, the longest command the " +
        "sandbox can run). Nothing was run.",
    });
  });

  it("syntax nested deeper than MAX_SYNTAX_DEPTH is opaque, not analysed level by level", async () => {
    await loadBashParser();
    const depth = 150;
    const parts = analyzeBash(`${"echo $(".repeat(depth)}x${")".repeat(depth)}`);
    const whys = new Set(parts.filter((p) => p.kind === "opaque").map((p) => p.why));
    expect([...whys]).toEqual([`nested more than ${MAX_SYNTAX_DEPTH} syntax levels deep`]);
    // Two syntax levels per `echo $(`: the commands below the cut are not analysed.
    expect(parts.filter((p) => p.kind === "command")).toHaveLength(MAX_SYNTAX_DEPTH / 2);
  });
});

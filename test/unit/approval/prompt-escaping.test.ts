/**
 * F5: model-controlled text in an approval prompt, in the MCP elicitation message and in `warden
 * policy explain` cannot drive the human's terminal. A part holding `ESC[6A ESC[J` once moved the
 * cursor up and cleared the real command, leaving a harmless-looking prompt; every C0/C1 control,
 * DEL and the bidi overrides of "Trojan Source" (CVE-2021-42574) are now shown as visible escapes.
 */
import { describe, expect, it } from "vitest";
import { describeRequest } from "../../../src/approval/index.js";
import { formatDecision } from "../../../src/cli/commands/policy.js";
import { ElicitationApproval } from "../../../src/mcp/elicitation-approval.js";
import type { ApprovalRequest, Decision } from "../../../src/policy/index.js";
import { terminalSafeLine } from "../../../src/util/index.js";

const ESC = "\x1b";
const SPOOF = `${ESC}[2K${ESC}[6A${ESC}[1G${ESC}[J Tool call needs approval: bash python3 --version`;
const PART = `python3 -c "open('/workspace/SPOOFED','w').write('x')" '${SPOOF}\u202e'`;
const SHOWN_PART =
  "python3 -c \"open('/workspace/SPOOFED','w').write('x')\" '\\x1b[2K\\x1b[6A\\x1b[1G\\x1b[J Tool call needs approval: bash python3 --version\\u202e'";

const decision: Decision = {
  decision: "ask",
  ruleId: "ask-\u2066python",
  layer: "operator",
  part: PART,
  reason: `runs code\n  asked by nothing${ESC}]0;t\x07`,
  trail: [
    {
      kind: "command",
      part: PART,
      decision: "ask",
      ruleId: "ask-python",
      via: [`bash -c ${ESC}[J`],
      reason: "line1\u009b2J\rline2",
    },
  ],
};

const request = {
  tool: "bash",
  args: { command: PART },
  decision,
  signal: new AbortController().signal,
} as ApprovalRequest;

const PROMPT = [
  `Tool call needs approval: bash {"command":"python3 -c \\"open('/workspace/SPOOFED','w').write('x')\\" '\\u001b[2K\\u001b[6A\\u001b[1G\\u001b[J Tool call needs approval: bash python3 --version\\u202e'"}`,
  `  asked by rule 'ask-\\u2066python' (operator) for '${SHOWN_PART}': runs code\\x0a  asked by nothing\\x1b]0;t\\x07`,
].join("\n");

describe("terminalSafeLine", () => {
  it("escapes every C0 control (tab and newline too), DEL, C1 and the bidi controls; keeps other text", () => {
    expect(
      terminalSafeLine("a\tb\nc\r\x00\x7f\u0085\u009b é 漢 \u2028\u202a\u202e\u2066\u2069\u200f\u061c z"),
    ).toBe("a\\x09b\\x0ac\\x0d\\x00\\x7f\\x85\\x9b é 漢 \\u2028\\u202a\\u202e\\u2066\\u2069\\u200f\\u061c z");
  });
});

describe("approval prompts show model text with its controls visible (F5)", () => {
  it("describeRequest: the part, rule and reason of a tool call", () => {
    expect(describeRequest(request)).toBe(PROMPT);
  });

  it("describeRequest: the host and rule of a network connection", () => {
    const shown = describeRequest({
      ...request,
      sessionId: `s1${ESC}[2J`,
      network: { host: `evil.com${ESC}[1A`, port: 443, rule: "ask \u202e*" },
    } as ApprovalRequest);
    expect(shown).toBe(
      "Network connection needs approval: session s1\\x1b[2J connects to evil.com\\x1b[1A:443\n  asked by rule 'ask \\u202e*'",
    );
  });

  it("the MCP elicitation message is the same escaped text", async () => {
    const sent: { message: string }[] = [];
    const server = {
      getClientCapabilities: () => ({ elicitation: {} }),
      elicitInput: async (params: { message: string }) => {
        sent.push(params);
        return { action: "accept", content: { decision: "allow-once" } };
      },
    };
    const approval = new ElicitationApproval(server as never);
    expect(await approval.request(request)).toBe("allow-once");
    expect(sent.map((p) => p.message)).toEqual([`warden: ${PROMPT}`]);
  });

  it("policy explain: arguments no path rule matched share one line, after the command", () => {
    const part = (p: string) => ({ kind: "argument" as const, part: p, decision: "allow" as const });
    const argued: Decision = {
      decision: "allow",
      ruleId: "allow-read-only-commands",
      layer: "operator",
      part: "ls -la src",
      trail: [
        {
          kind: "command",
          part: "ls -la src",
          decision: "allow",
          ruleId: "allow-read-only-commands",
          layer: "operator",
        },
        part("/workspace/a"),
        part("/workspace/src"),
      ],
    };
    expect(formatDecision(argued).split("\n").slice(3)).toEqual([
      "trail:",
      "  allow command ls -la src [allow-read-only-commands @operator]",
      "  allow argument words that may name files: /workspace/a, /workspace/src — no deny or ask path rule matches them (each word that may be a path counts, a subcommand and an option's attached value too: -rf may be -r f)",
      "(paths resolved lexically; symlinks are not followed by explain)",
    ]);
  });

  it("policy explain: the decision and every trail entry", () => {
    expect(formatDecision(decision)).toBe(
      [
        "decision: ask",
        "rule: ask-\\u2066python (operator)",
        `part: ${SHOWN_PART}`,
        "reason: runs code\\x0a  asked by nothing\\x1b]0;t\\x07",
        "trail:",
        `  ask   command ${SHOWN_PART} (via bash -c \\x1b[J) [ask-python] — line1\\x9b2J\\x0dline2`,
        "(paths resolved lexically; symlinks are not followed by explain)",
      ].join("\n"),
    );
  });
});

/**
 * Issue 37, item 4, through real sessions: every command of test/fixtures/devfd-corpus.ts gets the
 * same decision (and rule, and for an ask the same trail) from `warden policy explain`'s function
 * (evaluate with lexicalContext) and from a live session's policy hook, under default and readonly;
 * no approval prompt or refusal names the helper's descriptors (`/proc/14/fd/pipe:[…]`, as they
 * did when /dev/stdout was resolved through the helper); and the sandbox's bash, with no policy,
 * does to notes.txt what each case says (`echo hi 1<notes.txt >/dev/stdout` writes it).
 */
import { randomBytes } from "node:crypto";
import { chmodSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { describeRequest } from "../../../src/approval/index.js";
import type { PolicyAuditRecord } from "../../../src/audit/index.js";
import {
  type ApprovalRequest,
  createPolicyHook,
  evaluate,
  lexicalContext,
  loadBashParser,
  loadPolicy,
} from "../../../src/policy/index.js";
import type { Session } from "../../../src/session/types.js";
import type { ToolResultMessage } from "../../../src/tools/types.js";
import { DEV_FD_CORPUS } from "../../fixtures/devfd-corpus.js";
import { createTestSession, describeBackend } from "../../helpers/backend.js";

const tenant = `test-devfd-${randomBytes(3).toString("hex")}`;
const shipped = (name: string) => new URL(`../../../policies/${name}.yaml`, import.meta.url).pathname;
const text = (r: ToolResultMessage | undefined) => (r?.content[0]?.type === "text" ? r.content[0].text : "");
/** A descriptor of the helper as realpath through it names one (`/proc/14/fd/pipe:[1498391]`). */
const HELPER_FD = /\/proc\/\d+\/(task\/\d+\/)?fd\/[a-z_]+:\[/;

/** A live session under a shipped policy, recording what its hook asks and decides. */
interface Guarded {
  session: Session;
  asked: ApprovalRequest[];
  audited: PolicyAuditRecord[];
  refusals: string[];
}

describeBackend("/dev/std*, /dev/fd/N and /proc/self/fd/N: explain = live (issue 37, item 4)", () => {
  const dirs: string[] = [];
  const sessions: Session[] = [];
  const workspace = () => {
    const dir = mkdtempSync(join(tmpdir(), "warden-devfd-"));
    dirs.push(dir);
    chmodSync(dir, 0o755);
    writeFileSync(join(dir, "notes.txt"), "original\n");
    writeFileSync(join(dir, ".env"), "API_KEY=devfd-secret\n");
    symlinkSync("/dev/stdout", join(dir, "out"));
    return dir;
  };
  const bash = async (session: Session, command: string) => {
    const [result] = await session.runToolCalls([{ id: "c1", name: "bash", arguments: { command } }]);
    return result;
  };
  const guarded = async (policy: string): Promise<Guarded> => {
    const g: Guarded = { session: undefined as never, asked: [], audited: [], refusals: [] };
    const hook = createPolicyHook({
      policy: await loadPolicy([shipped(policy)]),
      sessionId: tenant,
      approval: {
        request: async (req) => {
          g.asked.push(req);
          return "deny";
        },
      },
      audit: { record: (entry) => g.audited.push(entry) },
    });
    g.session = await createTestSession({
      tenant,
      sandbox: { workspace: { hostPath: workspace(), mode: "copy" } },
      beforeToolCall: [hook],
    });
    sessions.push(g.session);
    return g;
  };
  /** The live decision on `command`: ask when the approver was asked, else the audit line's. */
  const live = async (g: Guarded, command: string) => {
    const asked = g.asked.length;
    const result = await bash(g.session, command);
    if (result?.isError) g.refusals.push(text(result));
    const audit = g.audited.at(-1);
    const request = g.asked.length > asked ? g.asked.at(-1) : undefined;
    return {
      decision: request ? "ask" : audit?.decision,
      ruleId: audit?.ruleId,
      trail: request?.decision.trail.map((t) => `${t.kind} ${t.part} ${t.decision}`),
    };
  };

  beforeAll(async () => {
    await loadBashParser();
  });
  afterAll(async () => {
    for (const s of sessions) await s.close();
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  it("explain and a live session decide every corpus command alike, under default and readonly", async () => {
    const got: string[] = [];
    const want: string[] = [];
    const all: Guarded[] = [];
    for (const name of ["default", "readonly"] as const) {
      const g = await guarded(name);
      all.push(g);
      const policy = await loadPolicy([shipped(name)]);
      for (const c of DEV_FD_CORPUS) {
        const explained = await evaluate(
          policy,
          { tool: "bash", args: { command: c.command } },
          lexicalContext,
        );
        const seen = await live(g, c.command);
        want.push(`${name} ${c.command}: ${c[name]} rule ${explained.ruleId}`);
        got.push(`${name} ${c.command}: ${explained.decision} rule ${explained.ruleId}`);
        // Live: the same decision and rule, and for an ask the same trail the approver sees.
        want.push(`live ${name} ${c.command}: ${c[name]} rule ${explained.ruleId}`);
        got.push(`live ${name} ${c.command}: ${seen.decision} rule ${seen.ruleId}`);
        if (seen.trail)
          expect(seen.trail).toEqual(explained.trail.map((t) => `${t.kind} ${t.part} ${t.decision}`));
      }
    }
    expect(got).toEqual(want);
    expect(DEV_FD_CORPUS.length).toBeGreaterThanOrEqual(20);
    // No prompt and no refusal names the helper's own descriptors.
    const prompts = all.flatMap((g) => g.asked.map((req) => describeRequest(req)));
    expect(prompts.length).toBeGreaterThan(0);
    expect([...prompts, ...all.flatMap((g) => g.refusals)].filter((t) => HELPER_FD.test(t))).toEqual([]);
  }, 300_000);

  it("a workspace link to /dev/stdout is asked about as written, not as the helper's pipe", async () => {
    const g = await guarded("default");
    const seen = await live(g, "echo hi >out");
    expect(seen.decision).toBe("ask");
    const prompt = describeRequest(g.asked[0] as ApprovalRequest);
    expect(prompt).toContain("for '>out': the path leads through a link to a file descriptor (/dev/fd)");
    expect(prompt).not.toMatch(HELPER_FD);
  }, 120_000);

  it("the sandbox's bash does to notes.txt what each corpus case says", async () => {
    const session = await createTestSession({
      tenant,
      sandbox: { workspace: { hostPath: workspace(), mode: "copy" } },
    });
    sessions.push(session);
    const got: string[] = [];
    const want: string[] = [];
    for (const c of DEV_FD_CORPUS) {
      await bash(session, "printf 'original\\n' >notes.txt");
      await bash(session, c.command);
      const notes = text(await bash(session, "cat notes.txt"));
      got.push(`${c.command}: ${notes === "original\n" ? "keeps notes.txt" : "writes notes.txt"}`);
      want.push(`${c.command}: ${c.bash}`);
    }
    expect(got).toEqual(want);
  }, 300_000);
});

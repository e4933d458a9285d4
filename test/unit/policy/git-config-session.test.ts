/**
 * F6: "allow for this session" of a git command that asked because of its configuration covers
 * exactly what the approver saw: the key and its value (and a hook's text). Before, the reason named
 * only the key, so `core.fsmonitor = /bin/true`, approved for the session, let a later
 * `core.fsmonitor = touch /workspace/PWNED` run without a prompt.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { describeRequest } from "../../../src/approval/index.js";
import type { BeforeToolCallContext } from "../../../src/pipeline/types.js";
import {
  type ApprovalProvider,
  type ApprovalRequest,
  createPolicyHook,
  loadPolicy,
  type Policy,
} from "../../../src/policy/index.js";
import type { AnyTool } from "../../../src/tools/types.js";
import { FakeSandbox } from "../../helpers/fake-sandbox.js";

class SessionApproval implements ApprovalProvider {
  readonly requests: ApprovalRequest[] = [];
  request(req: ApprovalRequest) {
    this.requests.push(req);
    return Promise.resolve("allow-session" as const);
  }
}

const context = (sandbox: FakeSandbox, command: string): BeforeToolCallContext => ({
  call: { id: "c", name: "bash", arguments: { command } },
  tool: { name: "bash" } as AnyTool,
  args: { command },
  sandbox,
  sessionId: "s1",
});

const config = (fsmonitor: string) => `[core]\n\tbare = false\n\tfsmonitor = ${fsmonitor}\n`;

describe("a session approval of git's configuration covers the values the approver saw (F6)", () => {
  let policy: Policy;
  beforeAll(async () => {
    policy = await loadPolicy([new URL("../../../policies/default.yaml", import.meta.url).pathname]);
  });

  function session(files: Record<string, string>) {
    const sandbox = new FakeSandbox({ files });
    const approval = new SessionApproval();
    const hook = createPolicyHook({ policy, sessionId: "s1", approval });
    return { sandbox, approval, run: (command: string) => hook(context(sandbox, command)) };
  }

  it("the prompt shows the key and its value; a changed value asks again, an unchanged one does not", async () => {
    const s = session({ "/workspace/.git": "gitdir: g\n", "/workspace/g/config": config("/bin/true") });
    expect(await s.run("git status")).toBeUndefined();
    expect(s.approval.requests.map((r) => describeRequest(r))).toEqual([
      'Tool call needs approval: bash {"command":"git status"}\n  asked by no rule for \'git status\': git would run a program its configuration names (core.fsmonitor = /bin/true in /workspace/g/config)',
    ]);
    // Unchanged: the session approval covers it.
    expect(await s.run("git status")).toBeUndefined();
    expect(s.approval.requests).toHaveLength(1);
    // The model rewrites the value: asked again, with the new value shown (escaped).
    s.sandbox.file("/workspace/g/config", config("touch /workspace/PWNED\x1b[2K"));
    expect(await s.run("git status")).toBeUndefined();
    expect(s.approval.requests.map((r) => r.decision.reason)).toEqual([
      "git would run a program its configuration names (core.fsmonitor = /bin/true in /workspace/g/config)",
      "git would run a program its configuration names (core.fsmonitor = touch /workspace/PWNED\x1b[2K in /workspace/g/config)",
    ]);
    expect(describeRequest(s.approval.requests[1] as ApprovalRequest).split("\n")[1]).toBe(
      "  asked by no rule for 'git status': git would run a program its configuration names (core.fsmonitor = touch /workspace/PWNED\\x1b[2K in /workspace/g/config)",
    );
  });

  it("a second config's changed value asks again although the first config is unchanged", async () => {
    const s = session({
      "/home/sandbox/.gitconfig": "[core]\n\tpager = less\n",
      "/workspace/.git/config": config("/bin/true"),
    });
    await s.run("git status");
    s.sandbox.file("/workspace/.git/config", config("sh -c 'touch pwn'"));
    await s.run("git status");
    expect(s.approval.requests.map((r) => r.decision.reason)).toEqual([
      "git would run a program its configuration names (core.pager = less in /home/sandbox/.gitconfig; core.fsmonitor = /bin/true in /workspace/.git/config)",
      "git would run a program its configuration names (core.pager = less in /home/sandbox/.gitconfig; core.fsmonitor = sh -c 'touch pwn' in /workspace/.git/config)",
    ]);
  });

  it("a read-time hook is shown with its text, and a changed hook asks again", async () => {
    const hook = "/workspace/.git/hooks/post-index-change";
    const s = session({ "/workspace/.git/config": "[core]\n", [hook]: "#!/bin/sh\ntrue\n" });
    await s.run("git status");
    await s.run("git status");
    s.sandbox.file(hook, "#!/bin/sh\ntouch pwn\n");
    await s.run("git status");
    expect(s.approval.requests.map((r) => r.decision.reason)).toEqual([
      `git may run the hook ${hook}: #!/bin/sh\ntrue\n`,
      `git may run the hook ${hook}: #!/bin/sh\ntouch pwn\n`,
    ]);
  });

  it("a program set later in an included file asks again", async () => {
    const s = session({
      "/workspace/.git/config": '[include]\n\tpath = "../inc"\n',
      "/workspace/inc": "[user]\n\tname = me\n",
    });
    await s.run("git status");
    await s.run("git status");
    s.sandbox.file("/workspace/inc", "[include]\n\tpath = ~/more\n");
    s.sandbox.file("/home/sandbox/more", "[core]\n\tfsmonitor = touch pwn\n");
    await s.run("git status");
    expect(s.approval.requests.map((r) => r.decision.reason)).toEqual([
      'git would run a program its configuration names (include.path = "../inc" in /workspace/.git/config)',
      'git would run a program its configuration names (include.path = "../inc" in /workspace/.git/config; include.path = ~/more in /workspace/inc; core.fsmonitor = touch pwn in /home/sandbox/more)',
    ]);
  });
});

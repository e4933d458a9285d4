/**
 * Issue 13 item 4: a git command the policy allows as read-only asks when git would run a program
 * named in configuration: the repository's config (also through a `.git` file pointing elsewhere),
 * the global config, includes, or a hook git runs on a read.
 */
import { createHash } from "node:crypto";
import { beforeAll, describe, expect, it } from "vitest";
import { gitConfigHazard, includedFiles, programSettings } from "../../../src/policy/commands/git-config.js";
import { evaluate, lexicalContext, loadPolicy, type Policy } from "../../../src/policy/index.js";

describe("programSettings", () => {
  it("finds program-valued keys in every spelling git accepts", () => {
    const config = [
      "[core]",
      "\tfsmonitor = touch pwn",
      "\tpager = less",
      "[core]",
      "  fsmonitor = true",
      '[diff "pdf"]',
      "  textconv = pdftotext",
      "[filter.lfs]",
      "  smudge = git-lfs smudge %f",
      "[alias]",
      "  st = status",
      "  x = !sh -c 'touch pwn'",
      "[pager]",
      "  log = false",
      "  diff = sh -c 'touch pwn'",
      '[includeIf "gitdir:/"]',
      "  path = /tmp/evil",
      "[user]",
      "  name = me",
    ].join("\n");
    expect(programSettings(config)).toEqual([
      "core.fsmonitor = touch pwn",
      "core.pager = less",
      "diff.textconv = pdftotext",
      "filter.smudge = git-lfs smudge %f",
      "alias.x = !sh -c 'touch pwn'",
      "pager.diff = sh -c 'touch pwn'",
      "includeif.path = /tmp/evil",
    ]);
    expect(programSettings("[core]\n\trepositoryformatversion = 0\n\tbare = false\n")).toEqual([]);
  });

  it("shows a value continued over lines whole, and a long one cut with the digest of all of it", () => {
    // git reads `touch \` + `/tmp/pwn` as one value: a changed second line must change the reason.
    expect(programSettings("[core]\n\tfsmonitor = touch \\\n/tmp/pwn\n\tbare = false\n")).toEqual([
      "core.fsmonitor = touch \\\n/tmp/pwn",
    ]);
    expect(programSettings("[core]\n\tfsmonitor = true \\\n\n")).toEqual([]);
    const long = `sh -c '${"x".repeat(500)}'`;
    expect(programSettings(`[core]\n\tpager = ${long}\n`)).toEqual([
      `core.pager = ${long.slice(0, 400)}… (508 characters, sha256 ${createHash("sha256").update(long).digest("hex")})`,
    ]);
  });
});

describe("includedFiles", () => {
  it("resolves include and includeIf paths as git does: ~/ from the home, relative from the config's folder", () => {
    const config =
      '[include]\n\tpath = "../common"\n[includeIf "gitdir:/w/"]\n\tpath = ~/x.inc\n\tpath = /abs\n';
    expect(includedFiles(config, "/workspace/.git/config")).toEqual([
      "/workspace/common",
      "/home/sandbox/x.inc",
      "/abs",
    ]);
  });
});

function files(map: Record<string, string>) {
  return async (path: string) => map[path] ?? null;
}

describe("gitConfigHazard", () => {
  it("reads the repository's config, following a .git file to where it points", async () => {
    const read = files({
      "/workspace/sub/.git": "gitdir: ../../elsewhere/repo.git\n",
      "/elsewhere/repo.git/config": "[diff]\n\texternal = touch pwn\n",
    });
    expect(await gitConfigHazard(read, ["/workspace/sub"])).toBe(
      "git would run a program its configuration names (diff.external = touch pwn in /elsewhere/repo.git/config)",
    );
  });

  it("finds the repository of a subdirectory, the global config and read-time hooks", async () => {
    expect(
      await gitConfigHazard(files({ "/workspace/.git/config": "[core]\n\tbare = false\n" }), [
        "/workspace/src",
      ]),
    ).toBeNull();
    expect(
      await gitConfigHazard(files({ "/home/sandbox/.gitconfig": "[core]\n\tpager = sh\n" }), ["/workspace"]),
    ).toBe("git would run a program its configuration names (core.pager = sh in /home/sandbox/.gitconfig)");
    const hooked = files({
      "/workspace/.git/config": "[core]\n",
      "/workspace/.git/hooks/post-index-change": "#!/bin/sh\ntouch pwn\n",
    });
    expect(await gitConfigHazard(hooked, ["/workspace"])).toBe(
      "git may run the hook /workspace/.git/hooks/post-index-change: #!/bin/sh\ntouch pwn\n",
    );
  });
});

describe("evaluate with a sandbox reader", () => {
  let policy: Policy;
  beforeAll(async () => {
    policy = await loadPolicy([new URL("../../../policies/default.yaml", import.meta.url).pathname]);
  });
  const evil = { "/workspace/.git/config": "[core]\n\tfsmonitor = touch /workspace/pwned\n" };
  const ctx = (map: Record<string, string>) => ({ ...lexicalContext, readText: files(map) });
  const decide = (command: string, map: Record<string, string>) =>
    evaluate(policy, { tool: "bash", args: { command } }, ctx(map));

  it("an allowed git status asks when the repository sets core.fsmonitor", async () => {
    const d = await decide("git status", evil);
    expect(d).toMatchObject({
      decision: "ask",
      part: "git status",
      reason:
        "git would run a program its configuration names (core.fsmonitor = touch /workspace/pwned in /workspace/.git/config)",
    });
  });

  it("attack-38b F3: an allowed git log --help asks when the config names git help's viewer command", async () => {
    const viewer = '[man]\n\tviewer = x\n[man "x"]\n\tcmd = id\n[browser "y"]\n\tpath = /workspace/y\n';
    const d = await decide("git log --help", { "/workspace/.git/config": viewer });
    expect([d.decision, d.part, d.reason]).toEqual([
      "ask",
      "git log --help",
      "git would run a program its configuration names (man.cmd = id, browser.path = /workspace/y in /workspace/.git/config)",
    ]);
  });

  it("cd into a directory before git leaves the repository unknown: ask", async () => {
    const d = await decide("cd sub && git status", {});
    expect(d.decision).toBe("ask");
    expect(d.reason).toBe("the script changes directory, so which repository configures git is not known");
  });

  it("configuration that cannot be read asks, and a deny elsewhere in the script still decides", async () => {
    const failing = {
      ...lexicalContext,
      readText: () => Promise.reject(new Error("lstat /workspace/.git: permission denied")),
    };
    const d = await evaluate(policy, { tool: "bash", args: { command: "git status" } }, failing);
    expect(d).toMatchObject({
      decision: "ask",
      reason: "git's configuration could not be read (lstat /workspace/.git: permission denied)",
    });
    const both = await evaluate(
      policy,
      { tool: "bash", args: { command: "git status && rm -rf src" } },
      failing,
    );
    expect(both).toMatchObject({ decision: "deny", ruleId: "deny-rm" });
  });

  it("a clean repository, and commands other than git, stay allowed", async () => {
    expect((await decide("git status && git diff", { "/workspace/.git/config": "[core]\n" })).decision).toBe(
      "allow",
    );
    expect((await decide("ls", evil)).decision).toBe("allow");
  });
});

/**
 * attack-37 F1: the git-config check reads every file git reads for a read-only command:
 * config.worktree, the common dir's config, submodules' repositories, bare repositories, whole
 * configs only, and the directory git runs in (git -C, env -C, --git-dir).
 */
import { describe, expect, it } from "vitest";
import {
  gitConfigHazard,
  MAX_GIT_FILE_BYTES,
  scriptGitHazard,
} from "../../../src/policy/commands/git-config.js";
import { lexicalContext } from "../../../src/policy/index.js";
import { shippedPolicies } from "../../helpers/policy.js";

function files(map: Record<string, string>) {
  return async (path: string) => map[path] ?? null;
}

const FSMONITOR = '[core]\n\tfsmonitor = "id > /workspace/PWNED; false"\n';
const SHOWN = 'core.fsmonitor = "id > /workspace/PWNED; false"';
const repo = { "/workspace/.git/HEAD": "ref: refs/heads/main\n", "/workspace/.git/config": "[core]\n" };

describe("gitConfigHazard reads every config git reads", () => {
  it("config.worktree (read when extensions.worktreeConfig is set)", async () => {
    const read = files({
      "/workspace/.git": "gitdir: g\n",
      "/workspace/g/HEAD": "ref: refs/heads/main\n",
      "/workspace/g/config": "[core]\n\trepositoryformatversion = 1\n[extensions]\n\tworktreeConfig = true\n",
      "/workspace/g/config.worktree": FSMONITOR,
    });
    expect(await gitConfigHazard(read, ["/workspace"])).toBe(
      `git would run a program its configuration names (${SHOWN} in /workspace/g/config.worktree)`,
    );
  });

  it("the config of the common dir .git/commondir names", async () => {
    const read = files({ ...repo, "/workspace/.git/commondir": "../g\n", "/workspace/g/config": FSMONITOR });
    expect(await gitConfigHazard(read, ["/workspace"])).toBe(
      `git would run a program its configuration names (${SHOWN} in /workspace/g/config)`,
    );
  });

  it("a submodule's own repository, through its .git file and .git/modules/<name>", async () => {
    const base = {
      ...repo,
      "/workspace/.gitmodules": '[submodule "sub"]\n\tpath = sub\n\turl = ../subrepo\n',
    };
    const viaFile = files({
      ...base,
      "/workspace/sub/.git": "gitdir: ../g\n",
      "/workspace/g/HEAD": "ref: refs/heads/main\n",
      "/workspace/g/config": FSMONITOR,
    });
    expect(await gitConfigHazard(viaFile, ["/workspace"])).toBe(
      `git would run a program its configuration names (${SHOWN} in /workspace/g/config)`,
    );
    const modules = files({ ...base, "/workspace/.git/modules/sub/config": FSMONITOR });
    expect(await gitConfigHazard(modules, ["/workspace"])).toBe(
      `git would run a program its configuration names (${SHOWN} in /workspace/.git/modules/sub/config)`,
    );
  });

  it("a bare repository git finds by itself (a folder holding HEAD)", async () => {
    const read = files({ "/workspace/g/HEAD": "ref: refs/heads/main\n", "/workspace/g/config": FSMONITOR });
    expect(await gitConfigHazard(read, ["/workspace/g"])).toBe(
      `git would run a program its configuration names (${SHOWN} in /workspace/g/config)`,
    );
  });

  it("a config longer than what is read whole asks (git reads all of it)", async () => {
    const long = `[core]\n${"# x\n".repeat(MAX_GIT_FILE_BYTES / 4)}`;
    const read = files({ ...repo, "/workspace/.git/config": long });
    expect(await gitConfigHazard(read, ["/workspace"])).toBe(
      `/workspace/.git/config is longer than ${MAX_GIT_FILE_BYTES} bytes, so it was not read whole`,
    );
  });

  it("a config git's reader stops on asks", async () => {
    const read = files({ ...repo, "/workspace/.git/config": '[core]\n\tpager = "x\n' });
    expect(await gitConfigHazard(read, ["/workspace"])).toBe(
      "/workspace/.git/config is not read as git reads it (line 2: a quoted value without its closing quote)",
    );
  });
});

describe("scriptGitHazard checks the directory git runs in", () => {
  const planted = files({
    "/workspace/sub/.git": "gitdir: ../g\n",
    "/workspace/g/HEAD": "ref: refs/heads/main\n",
    "/workspace/g/config": FSMONITOR,
  });
  const hazard = `git would run a program its configuration names (${SHOWN} in /workspace/g/config)`;

  it("env -C / --chdir DIR git …: DIR's repository", async () => {
    const git = ["git", "status", "--short"];
    expect(await scriptGitHazard(planted, [["env", "-C", "sub", ...git], git], [git])).toBe(hazard);
    expect(await scriptGitHazard(planted, [["env", "--chdir=sub", ...git], git], [git])).toBe(hazard);
    expect(await scriptGitHazard(planted, [["env", "-Csub", ...git], git], [git])).toBe(hazard);
  });

  it("git -C and --git-dir", async () => {
    const c = ["git", "-c", "x=y", "-C", "sub", "status"];
    expect(await scriptGitHazard(planted, [c], [c])).toBe(hazard);
    const g = ["git", "--git-dir=g", "status"];
    expect(await scriptGitHazard(planted, [g], [g])).toBe(hazard);
  });

  it("a directory not known asks", async () => {
    const git = ["git", "status"];
    expect(await scriptGitHazard(files({}), [["env", "-C", null, ...git], git], [git])).toBe(
      "env runs its command in a directory not known here, so which repository configures git is not known",
    );
    expect(await scriptGitHazard(files({}), [["find", ".", "-execdir", ...git, ";"], git], [git])).toBe(
      "find runs its command in a directory not known here, so which repository configures git is not known",
    );
  });
});

describe("evaluate under the default policy (attack-37 F1 repros)", () => {
  const shipped = shippedPolicies("default");
  const decide = (command: string, map: Record<string, string>) =>
    shipped.decide("default", command, { ...lexicalContext, readText: files(map) });

  it("repro A: .git/commondir → g whose config has fsmonitor on the header line: git status asks", async () => {
    const d = await decide("git status --short", {
      "/workspace/.git/HEAD": "ref: refs/heads/main\n",
      "/workspace/.git/commondir": "../g\n",
      "/workspace/g/config": '[core] fsmonitor = "id > /workspace/PWNED4; false"\n',
    });
    expect(d).toMatchObject({
      decision: "ask",
      reason: `git would run a program its configuration names (core.fsmonitor = "id > /workspace/PWNED4; false" in /workspace/g/config)`,
    });
  });

  it("variant F: env -C sub git status asks (the repository of sub)", async () => {
    const map = {
      "/workspace/sub/.git": "gitdir: ../g\n",
      "/workspace/g/HEAD": "ref: refs/heads/main\n",
      "/workspace/g/config": FSMONITOR,
    };
    const reason = `git would run a program its configuration names (${SHOWN} in /workspace/g/config)`;
    expect(await decide("env -C sub git status --short", map)).toMatchObject({ decision: "ask", reason });
  });

  it("git -C sub status asks as env -C sub does: the command is judged as git status run in sub", async () => {
    const map = {
      "/workspace/sub/.git": "gitdir: ../g\n",
      "/workspace/g/HEAD": "ref: refs/heads/main\n",
      "/workspace/g/config": FSMONITOR,
    };
    const reason = `git would run a program its configuration names (${SHOWN} in /workspace/g/config)`;
    expect(await decide("git -C sub status --short", map)).toMatchObject({ decision: "ask", reason });
    expect(await decide("git -C sub status --short", {})).toMatchObject({ decision: "allow" });
  });
});

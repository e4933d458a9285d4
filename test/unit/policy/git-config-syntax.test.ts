/**
 * attack-37 F1: git's config syntax read as git reads it (git-config(1), config.c), so a
 * program-valued key git would run is never invisible to the git-config check.
 */
import { describe, expect, it } from "vitest";
import { programSettings, submodulePaths } from "../../../src/policy/commands/git-config.js";
import { parseGitConfig } from "../../../src/policy/commands/git-config-syntax.js";

describe("programSettings reads every spelling git accepts", () => {
  it("a key on the same line as its section header (git accepts it)", () => {
    expect(programSettings("[core] fsmonitor = x\n")).toEqual(["core.fsmonitor = x"]);
    expect(programSettings("[core]fsmonitor=x\n")).toEqual(["core.fsmonitor = x"]);
    expect(programSettings("[core]\rfsmonitor=x\n")).toEqual(["core.fsmonitor = x"]);
    expect(programSettings('[diff "a"] textconv = cmd\n')).toEqual(["diff.textconv = cmd"]);
    expect(programSettings('[core] fsmonitor = "id > /workspace/PWNED4; false"\n')).toEqual([
      'core.fsmonitor = "id > /workspace/PWNED4; false"',
    ]);
  });

  it("section and key names in any case, old [section.sub] headers, CRLF and a byte-order mark", () => {
    expect(programSettings("\uFEFF[CORE]\r\n\tFsMonitor = x\r\n")).toEqual(["core.fsmonitor = x"]);
    expect(programSettings("[Filter.LFS]\n\tSmudge = s\n")).toEqual(["filter.smudge = s"]);
  });

  it("quoted values and comments: a boolean in quotes is still a boolean, a quoted # is a value", () => {
    expect(programSettings('[core]\n\tfsmonitor = "true" ; comment\n')).toEqual([]);
    expect(programSettings('[core]\n\tfsmonitor = "a # b"\n')).toEqual(['core.fsmonitor = "a # b"']);
    expect(programSettings("[core]\n\t# fsmonitor = x\n; fsmonitor = y\n")).toEqual([]);
  });

  it("a continuation line starting with a key's spelling is part of the value, not a key", () => {
    expect(programSettings("[core]\n\tbare = false \\\nfsmonitor = x\n")).toEqual([]);
  });
});

describe("parseGitConfig", () => {
  it("resolves values as git does: quotes, escapes, continuations, inner whitespace", () => {
    const { entries, error } = parseGitConfig(
      '[a "Sub \\"q\\""]\n\tk = " x "  y \\\n z\\t\n\tflag\n[b.C]\n\tk2 = v # c\n',
    );
    expect(error).toBeNull();
    expect(entries.map(({ section, subsection, key, value }) => [section, subsection, key, value])).toEqual([
      ["a", 'Sub "q"', "k", " x   y  z\t"],
      ["a", 'Sub "q"', "flag", null],
      ["b", "c", "k2", "v"],
    ]);
  });

  it("stops where git's reader stops (bad config line), naming the line", () => {
    expect(parseGitConfig('[core]\n\tfsmonitor = "x\n').error).toBe(
      "line 2: a quoted value without its closing quote",
    );
    expect(parseGitConfig("fsmonitor = x\n").error).toBe("line 1: a key before any [section]");
    expect(parseGitConfig("[core\n").error).toBe("line 1: a section header's subsection is not quoted");
    expect(parseGitConfig("[core]\n\tk v\n").error).toBe(
      'line 2: "k" is followed by neither "=" nor the line\'s end',
    );
  });
});

describe("submodulePaths", () => {
  it("names every submodule's path and name", () => {
    expect(
      submodulePaths('[submodule "lib"]\n\tpath = vendor/lib\n\turl = ../lib\n[submodule "x"] path = x\n'),
    ).toEqual([
      { name: "lib", path: "vendor/lib" },
      { name: "x", path: "x" },
    ]);
  });
});

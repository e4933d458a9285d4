/**
 * Issue 37, item 5: build tools' inline forms. An allow rule naming `make`, `pytest` or `tsc`
 * grants the project's own build, not one the command line redefines: a make variable assignment
 * that changes what runs, pytest's `--basetemp` (it deletes that directory), its environment
 * variables, and files written outside the workspace are effects or written paths, each with the
 * exact decision under default, ci and readonly.
 */
import { describe, expect, it } from "vitest";
import { makeAssignments } from "../../../src/policy/commands/build.js";
import { judgeForm } from "../../../src/policy/commands/model.js";
import { type ArgWord, DANGEROUS_VARIABLES } from "../../../src/policy/index.js";
import { shippedPolicies } from "../../helpers/policy.js";

/** The decisions under default, ci and readonly, one letter each (A allow, ? ask, d deny). */
const shipped = shippedPolicies("default", "ci", "readonly");
const decisions = shipped.letters;

const literal = (...words: string[]): ArgWord[] => words.map((value) => ({ value, expands: false }));

describe("make's command-line assignments", () => {
  it.each([
    [["SHELL=/bin/sh"], "exec"],
    [[".SHELLFLAGS=-c"], "exec"],
    [["MAKEFLAGS=--eval=x"], "exec"],
    [["CC=./evil"], "exec"],
    [["TEST_CMD=sh -c id"], "exec"],
    [["X!=id"], "exec"],
    [["X:=$(shell id)"], "exec"],
    [["X+=1"], "exec"],
    [["MAKE=1"], "exec"],
    [["V=1"], null],
    [["DEBUG:=0", "all"], null],
    [["EMPTY="], null],
    [["test", "build"], null],
  ])("%j is %s", (operands, expected) => {
    expect(makeAssignments(operands)).toBe(expected);
  });

  it("-e lets the environment override the makefiles: exec", () => {
    expect(judgeForm(literal("make", "-e", "test"))?.effects).toEqual(["exec"]);
  });
});

describe("pytest and tsc: effects and written paths", () => {
  it("pytest --basetemp DIR writes (deletes) DIR; report files are written paths; @FILE is unknown", () => {
    const basetemp = judgeForm(literal("pytest", "--basetemp", "src"));
    expect(basetemp?.effects).toEqual(["write"]);
    expect(basetemp?.writes.map((w) => w.value)).toEqual(["src"]);
    const junit = judgeForm(literal("pytest", "--junitxml=/tmp/r.xml", "-q"));
    expect(junit?.effects).toEqual([]);
    expect(junit?.writes.map((w) => w.value)).toEqual(["/tmp/r.xml"]);
    expect(judgeForm(literal("pytest", "@args.txt"))?.unknown).toBe(
      "pytest reads more arguments from an @FILE",
    );
    const logs = judgeForm(literal("pytest", "--log-file", "a.log", "--resultlog=b.log", "--debug=c.log"));
    expect(logs?.writes.map((w) => w.value)).toEqual(["a.log", "b.log", "c.log"]);
    expect(judgeForm(literal("pytest", "--confcutdir=/", "--pdbcls=m:C"))?.effects).toEqual(["exec"]);
    expect(judgeForm(literal("pytest", "--pastebin=all"))?.effects).toEqual(["network"]);
  });

  it("tsc's output options are written paths, in any case and with one dash", () => {
    for (const argv of [
      ["tsc", "--outFile", "/tmp/x.js"],
      ["tsc", "--OUTFILE", "/tmp/x.js"],
      ["tsc", "-outFile", "/tmp/x.js"],
    ])
      expect(judgeForm(literal(...argv))?.writes.map((w) => w.value)).toEqual(["/tmp/x.js"]);
    expect(
      judgeForm(literal("tsc", "--outDir", "dist", "--declarationDir", "types"))?.writes.map((w) => w.value),
    ).toEqual(["dist", "types"]);
    expect(
      judgeForm(literal("tsc", "--tsBuildInfoFile", "/tmp/b", "--generateTrace", "/tmp/t"))?.writes.map(
        (w) => w.value,
      ),
    ).toEqual(["/tmp/b", "/tmp/t"]);
  });

  it("the model's tool variables count as variables that change what runs", () => {
    for (const name of [
      "PYTEST_ADDOPTS",
      "PYTEST_PLUGINS",
      "PYTEST_DEBUG_TEMPROOT",
      "MFLAGS",
      "GNUMAKEFLAGS",
    ])
      expect(DANGEROUS_VARIABLES.test(name)).toBe(true);
    expect(DANGEROUS_VARIABLES.test("PYTEST_THEME")).toBe(false);
  });
});

describe("issue 37 item 5: build tools' inline forms (default ci readonly)", () => {
  it.each([
    // The finding's forms: default and ci allowed each (AAd) before.
    ["make SHELL=/bin/sh .SHELLFLAGS='-c touch pwn'", "?dd"],
    ["make MAKEFLAGS=--eval=x", "?dd"],
    ["make CC='sh -c id' hello", "?dd"],
    ["make 'X!=touch pwn'", "?dd"],
    ["make -e test", "?dd"],
    ["pytest --basetemp=src", "?dd"],
    ["PYTEST_ADDOPTS='-p evil' pytest", "?dd"],
    ["PYTEST_PLUGINS=evil pytest", "?dd"],
    ["env PYTEST_ADDOPTS=-pevil pytest", "?dd"],
    ["export PYTEST_PLUGINS=evil; pytest", "?dd"],
    ["pytest --junitxml=/tmp/x.xml", "?dd"],
    ["pytest --junitxml .env", "ddd"],
    ["pytest @args.txt", "?dd"],
    ["tsc --outFile /tmp/x.js", "?dd"],
    ["tsc --outDir /etc", "?dd"],
    ["tsc --OUTDIR /etc", "?dd"],
    ["tsc -outDir /etc", "?dd"],
    // Already not auto-allowed; listed so the class stays whole.
    ["make -f other.mk", "?dd"],
    ["make --eval='x:;touch pwn' x", "?dd"],
  ])("%s decides %s", async (command, expected) => {
    expect(await decisions(command)).toBe(expected);
  });

  it.each([
    "make",
    "make test",
    "make -j4 test",
    "make V=1 test",
    "make -C sub all",
    "pytest -q tests",
    "pytest --junitxml=report.xml",
    "tsc --noEmit",
    "tsc -p tsconfig.build.json",
    "tsc --outDir dist",
  ])("ordinary builds stay allowed under default and ci: %s", async (command) => {
    expect(await decisions(command)).toBe("AAd");
  });
});

describe("make takes every environment variable as a make variable", () => {
  it.each([
    ["RM='sh -c id' make clean", "?dd"],
    ["CC=./evil make hello", "?dd"],
    ["env RM=./evil make clean", "?dd"],
  ])("%s decides %s", async (command, expected) => {
    expect(await decisions(command)).toBe(expected);
  });

  it("the reason names the variable", async () => {
    const d = await shipped.decide("default", "RM=./evil make clean");
    expect(d.reason).toBe(
      "make takes RM from the environment as one of its own variables, which may change what it runs",
    );
  });

  it("a variable set before another modelled command is not its input: TZ=UTC date stays allowed", async () => {
    expect(await decisions("TZ=UTC date")).toBe("AAA");
  });
});

/**
 * attack-37 F8: a directory opened as a descriptor and walked through `/proc/self/fd/N/…` or
 * `/dev/fd/N/…`. The descriptor model (bash-fds.ts) resolves the name through the descriptor an
 * earlier redirection opened, so each form the report gives meets the `.git/config` rule; a
 * descriptor an `exec` may have set is opaque. Exact decisions under default, readonly and ci.
 */
import { beforeAll, describe, expect, it } from "vitest";
import {
  evaluate,
  lexicalContext,
  loadBashParser,
  loadPolicy,
  type Policy,
} from "../../../src/policy/index.js";

const shipped = (name: string) => new URL(`../../../policies/${name}.yaml`, import.meta.url).pathname;
const NAMES = ["default", "readonly", "ci"] as const;
let policies: Record<(typeof NAMES)[number], Policy>;

beforeAll(async () => {
  await loadBashParser();
  const entries = await Promise.all(NAMES.map(async (n) => [n, await loadPolicy([shipped(n)])] as const));
  policies = Object.fromEntries(entries) as typeof policies;
});

const decide = async (name: (typeof NAMES)[number], command: string) => {
  const d = await evaluate(policies[name], { tool: "bash", args: { command } }, lexicalContext);
  return [d.decision, d.ruleId ?? null, d.part ?? null];
};

describe("a directory descriptor walked through its name (F8)", () => {
  it.each([
    "cat /proc/self/fd/3/config 3<.git",
    "cat /dev/fd/3/config 3<.git",
    "cat /proc/thread-self/fd/3/config 3<.git",
    "cat /dev/fd/3/.git/config 3</workspace",
  ])("%s is the read of /workspace/.git/config: denied by deny-secrets everywhere", async (command) => {
    for (const name of NAMES)
      expect([name, ...(await decide(name, command))]).toEqual([
        name,
        "deny",
        "deny-secrets",
        "/workspace/.git/config",
      ]);
  });

  it("exec 3<.git; cat /proc/self/fd/3/config: the descriptor an exec set is opaque (default asks, readonly and ci deny)", async () => {
    const command = "exec 3<.git; cat /proc/self/fd/3/config";
    const part = "cat /proc/self/fd/3/config";
    expect(await decide("default", command)).toEqual(["ask", null, part]);
    expect(await decide("readonly", command)).toEqual(["deny", null, part]);
    expect(await decide("ci", command)).toEqual(["deny", null, part]);
  });

  it("an ordinary file below a directory descriptor stays allowed: cat /dev/fd/3/notes.txt 3<src", async () => {
    for (const name of NAMES)
      expect(await decide(name, "cat /dev/fd/3/notes.txt 3<src")).toEqual([
        "allow",
        "allow-read-only-commands",
        "cat /dev/fd/3/notes.txt",
      ]);
  });
});

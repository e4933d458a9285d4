/**
 * attack-37 F8: a directory opened as a descriptor and walked through `/proc/self/fd/N/…` or
 * `/dev/fd/N/…`. The descriptor model (bash/fds.ts) resolves the name through the descriptor an
 * earlier redirection opened, so each form the report gives meets the `.git/config` rule; a
 * descriptor an `exec` may have set is opaque. Exact decisions under default, readonly and ci.
 */
import { describe, expect, it } from "vitest";
import { decisionRulePart, shippedPolicies } from "../../helpers/policy.js";

const NAMES = ["default", "readonly", "ci"] as const;
const shipped = shippedPolicies(...NAMES);
const decide = async (name: (typeof NAMES)[number], command: string) =>
  decisionRulePart(await shipped.decide(name, command));

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

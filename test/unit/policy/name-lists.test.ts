/**
 * attack-37 F6: file names passed as data. A form that reads the files a list names (a list file,
 * or stdin for `-`) opens files its arguments never spell: `printf '.env\0' | sort --files0-from=-`
 * printed .env under every shipped policy. Such options are data in the command model
 * (Grammar.readsAny: GNU sort / wc / du --files0-from, sha*sum / md5sum / b2sum / cksum -c, file -f,
 * tar -T / --files-from and tar -C); the form then reads any path, so a deny path rule makes it ask
 * (default, readonly) or refuses it (ci), with the option named in the reason.
 */
import { describe, expect, it } from "vitest";
import { judgeForm } from "../../../src/policy/commands/model.js";
import { shippedPolicies } from "../../helpers/policy.js";

const shipped = shippedPolicies("default", "readonly", "ci");
const words = (command: string) => command.split(" ").map((value) => ({ value, expands: false, raw: value }));
const decisions = (command: string) => shipped.each(command, (d) => d.decision);

describe("forms that read the files a list names read any path (F6)", () => {
  const REFUSED = { default: "ask", readonly: "ask", ci: "deny" };
  it.each([
    "printf '.env\\0' | sort --files0-from=-",
    "printf '.env\\0' | sort --files0-from -",
    "printf '.git/config\\0' | sort --files0-f=-",
    "sort --files0-from=list.txt",
    "printf '.env\\0' | wc --files0-from=-",
    "wc --files0=list.txt",
    "printf '.env\\0' | du --files0-from=-",
    "du --files0-from=list.txt",
    "printf 'x  .env\\n' | sha256sum -c",
    "sha256sum --check SUMS",
    "md5sum -c SUMS",
    "file -f list.txt",
  ])("%s: default asks, readonly asks, ci denies", async (command) => {
    expect(await decisions(command)).toEqual(REFUSED);
  });

  it("the reason names the option", async () => {
    const d = await shipped.decide("default", "printf '.env\\0' | sort --files0-from=-");
    expect(d.reason).toBe(
      "sort: it reads the files a list names (--files0-from); it may expand to a path that rule 'deny-secrets' denies (secrets (.env, *.pem, *.key, ssh keys id_rsa etc., .git/config and its submodule / worktree / lock variants, .ssh, .netrc, .npmrc) are never read or written)",
    );
  });

  it("tar -T, --files-from (abbreviated too) and -C are in the model; tar itself asks by name under default", () => {
    expect(judgeForm(words("tar -cf - -T list.txt"))?.readsAny).toBe("it reads the files a list names (-T)");
    expect(judgeForm(words("tar -cf - --files=list.txt"))?.readsAny).toBe(
      "it reads the files a list names (--files-from)",
    );
    expect(judgeForm(words("tar -C .git -cf - config"))?.readsAny).toBe(
      "it reads its operands in another directory (-C)",
    );
    expect(judgeForm(words("tar -cf a.tar src"))?.readsAny).toBeUndefined();
  });

  it("ordinary forms stay allowed: sort -u, wc -l, du -sh, sha256sum FILE", async () => {
    for (const command of ["sort -u a.txt", "wc -l src/a.ts", "du -sh .", "sha256sum a.txt"])
      expect([command, await decisions(command)]).toEqual([
        command,
        { default: "allow", readonly: "allow", ci: "allow" },
      ]);
  });
});

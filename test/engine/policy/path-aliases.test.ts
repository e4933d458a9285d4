/**
 * attack-37 F5, F6 and F8, proved live in `ro` mode (the host workspace mounted read-only, its
 * `.env` and `.git/config` present in the sandbox): with no policy each command prints the secret;
 * under the shipped `default` and `readonly` policies each is refused and prints nothing of it.
 * F5: `env -C .git cat config` reads .git/config from another directory; F6: `sort --files0-from=-`
 * reads the files named on its stdin; F8: a directory opened as descriptor 3 and walked through
 * /proc/self/fd/3 and /dev/fd/3. attack-38b F1: a backslash-newline inside a word, which bash removes
 * before it splits words (`cat .e\` newline `nv` is `cat .env`); F2: the grep tool's glob, which
 * overrides .gitignore (`glob: "*"` searches the ignored `.env`).
 */
import { execFileSync } from "node:child_process";
import { chmod, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { warden } from "../../helpers/cli-run.js";
import { describeEngine } from "../../helpers/engine.js";
import { expectRefusedWithoutSecret, policyExec, shippedPolicyPath } from "../../helpers/policy-exec.js";

const TOKEN = "ghp_SECRETTOKEN37";
const SECRET = "API_KEY=sk-live-SECRET37";

describeEngine(
  "attack-37: paths named from another directory, in data, or through a descriptor, live",
  () => {
    let ws: string;
    beforeAll(async () => {
      ws = await mkdtemp(join(tmpdir(), "warden-pathaliases-"));
      // The sandbox user is not the file's owner: the read-only workspace must be readable by others.
      await chmod(ws, 0o755);
      execFileSync("git", ["-C", ws, "init", "-q"]);
      execFileSync("git", [
        "-C",
        ws,
        "remote",
        "add",
        "origin",
        `https://deploy:${TOKEN}@github.com/acme/app.git`,
      ]);
      await writeFile(join(ws, ".env"), `${SECRET}\n`);
      await writeFile(join(ws, "README.md"), "hi\n");
      await writeFile(join(ws, ".gitignore"), ".env\n");
    });
    afterAll(async () => {
      await rm(ws, { recursive: true, force: true });
    });

    const run = policyExec({ workspace: () => ws, mode: "ro", tenant: "test-pathaliases" });

    it.each([
      ["F5", "env -C .git cat config", TOKEN],
      ["F5", "env --chd=.git grep -n url config", TOKEN],
      ["F6", "printf '.env\\0' | sort --files0-from=-", SECRET],
      ["F6", "printf '.git/config\\0' | sort --files0-from=-", TOKEN],
      ["F8", "cat /proc/self/fd/3/config 3<.git", TOKEN],
      ["F8", "cat /dev/fd/3/config 3<.git", TOKEN],
      ["F8", "exec 3<.git; cat /proc/self/fd/3/config", TOKEN],
      ["38b F1", "cat .e\\\nnv", SECRET],
      ["38b F1", "cat .git/con\\\nfig", TOKEN],
      ["38b F2", "rg -g '**' url", TOKEN],
      ["38b F2", "rg -g '*' API_KEY", SECRET],
    ])(
      "%s: %s prints the secret with no policy; default and readonly refuse it",
      async (_f, command, secret) => {
        const ran = await run(null, command);
        expect(ran.stdout).toContain(secret);
        for (const policy of ["default", "readonly"]) {
          expectRefusedWithoutSecret(await run(shippedPolicyPath(policy), command), secret, policy);
        }
      },
    );

    it("38b F2: the grep tool's glob reaches the ignored .env with no policy; default and readonly refuse it", async () => {
      const grep = (policy: string, glob: string) =>
        warden(
          ["exec", "--policy", policy, "grep", JSON.stringify({ pattern: "API_KEY", glob })].concat([
            "-w",
            ws,
            "-m",
            "ro",
            "--tenant",
            "test-pathaliases",
          ]),
        );
      expect((await grep("allow-all", "*")).stdout).toContain(SECRET);
      expect((await grep("allow-all", "README*")).stdout).not.toContain(SECRET);
      for (const policy of ["default", "readonly"])
        for (const glob of ["*", ".env"])
          expectRefusedWithoutSecret(
            await grep(shippedPolicyPath(policy), glob),
            SECRET,
            `${policy} ${glob}`,
          );
    });

    it("the ordinary form still runs under readonly: env -C .git cat HEAD", async () => {
      const ran = await run(shippedPolicyPath("readonly"), "env -C .git cat HEAD");
      expect(ran.exitCode).toBe(0);
      expect(ran.stdout).toContain("ref: refs/heads/");
    });
  },
);

/**
 * `--secret NAME=env:VAR|file:PATH`, `--secret-env`, `--secret-file`: their syntax, the checks made
 * at start (a variable set, a file readable, a binding in the policy files, network), the
 * SessionSecret[] they give NetworkOptions.secrets, and values in no message.
 */
import { mkdtemp, rm, unlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseSecretFlags, withSessionSecrets } from "../../../src/cli/flags/secret-flags.js";
import { parseAllowNet } from "../../../src/egress/index.js";
import type { NetworkOptions } from "../../../src/egress/types.js";
import { type PolicyLayer, parsePolicyText } from "../../../src/policy/index.js";

const VALUE = "ghp_s3cr3tV4lue+/=";
const network: NetworkOptions = { mode: "allowlist", rules: parseAllowNet("api.github.com:443,pypi.org") };
const policy = (text: string, file = "p.yaml", position = 0): PolicyLayer =>
  parsePolicyText(`rules: []\n${text}`, file, position);
const bound = policy(
  "secrets:\n  GITHUB_TOKEN:\n    hosts: [api.github.com]\n    pathPrefixes: [/repos/acme/]\n",
);
const message = async (run: () => unknown): Promise<string> => {
  try {
    await run();
  } catch (err) {
    return (err as Error).message;
  }
  return "no error";
};

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "warden-secret-flags-"));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe("--secret syntax", () => {
  it("reads NAME=env:VAR and NAME=file:PATH (a relative path against the working directory) and the destinations", () => {
    expect(
      parseSecretFlags({
        secret: ["GITHUB_TOKEN=env:GH_TOKEN", "NPM_TOKEN=file:npm-token"],
        secretEnv: ["GITHUB_TOKEN=GH", "NPM_TOKEN="],
        secretFile: ["NPM_TOKEN=/tmp/secrets/npm"],
      }),
    ).toEqual([
      { name: "GITHUB_TOKEN", source: { kind: "env", variable: "GH_TOKEN" }, env: "GH" },
      {
        name: "NPM_TOKEN",
        source: { kind: "file", path: join(process.cwd(), "npm-token") },
        env: false,
        file: "/tmp/secrets/npm",
      },
    ]);
  });

  it("refuses anything else with the fix, echoing no more of the argument than its name and source kind", () => {
    const fails = (flags: Parameters<typeof parseSecretFlags>[0]) => message(() => parseSecretFlags(flags));
    const form =
      "must be NAME=env:VAR or NAME=file:PATH with NAME upper-case letters, digits and _, starting with a letter (e.g. --secret GITHUB_TOKEN=env:GITHUB_TOKEN); the value itself never goes on the command line, where other processes can read it.";
    return Promise.all([
      expect(fails({ secret: [VALUE] })).resolves.toBe(`--secret #1 ${form}`),
      expect(fails({ secret: ["A=env:A", `github_token=${VALUE}`] })).resolves.toBe(`--secret #2 ${form}`),
      expect(fails({ secret: [`GITHUB_TOKEN=${VALUE}`] })).resolves.toBe(
        "--secret GITHUB_TOKEN=…: the source must be env:VAR (a variable of warden's environment, read once at start) or file:PATH (a file read at each use); the value itself never goes on the command line, where other processes can read it.",
      ),
      expect(fails({ secret: [`GITHUB_TOKEN=env:${VALUE}`] })).resolves.toBe(
        "--secret GITHUB_TOKEN=env:…: after env: comes the name of an environment variable of warden's (letters, digits and _, not starting with a digit).",
      ),
      expect(fails({ secret: ["GITHUB_TOKEN=file:"] })).resolves.toMatch(
        /^--secret GITHUB_TOKEN=…: the source must be/,
      ),
      expect(fails({ secret: ["A=env:X", "A=file:/f"] })).resolves.toBe(
        "--secret A is given twice; give each secret once.",
      ),
      expect(fails({ secret: ["A=env:X"], secretEnv: ["B=X"] })).resolves.toBe(
        "--secret-env B=…: the name before = must be one a --secret gives (A).",
      ),
      expect(fails({ secretFile: ["B=/x"] })).resolves.toBe(
        "--secret-file B=…: the name before = must be one a --secret gives (none given).",
      ),
      expect(fails({ secret: ["A=env:X"], secretEnv: ["A=X", `${VALUE}=X`] })).resolves.toBe(
        "--secret-env #2: the name before = must be one a --secret gives (A).",
      ),
      expect(fails({ secret: ["A=env:X"], secretEnv: ["A=1X"] })).resolves.toBe(
        "--secret-env A=…: VAR must be an environment variable name (letters, digits and _, not starting with a digit), or empty for none.",
      ),
      expect(fails({ secret: ["A=env:X"], secretEnv: ["A=X", "A=Y"] })).resolves.toBe(
        "--secret-env A is given twice.",
      ),
      expect(fails({ secret: ["A=env:X"], secretFile: ["A=run/a"] })).resolves.toBe(
        "--secret-file A=…: the path in the sandbox must be absolute and normal (no ., .. or trailing /), e.g. /tmp/secrets/A (under /tmp, HOME or /workspace: the root is read-only).",
      ),
      expect(fails({ secret: ["A=env:X"], secretFile: ["A=/run/../a"] })).resolves.toMatch(
        /^--secret-file A=…: the path in the sandbox must be absolute/,
      ),
      expect(fails({ secret: ["A=env:X", "B=env:Y"], secretEnv: ["B=A"] })).resolves.toBe(
        "secrets A and B both put their placeholder in the environment variable A; give each its own with --secret-env or --secret-file.",
      ),
      expect(fails({ secret: ["A=env:X", "B=env:Y"], secretFile: ["A=/s", "B=/s"] })).resolves.toBe(
        "secrets A and B both put their placeholder in the file /s; give each its own with --secret-env or --secret-file.",
      ),
    ]);
  });
});

describe("withSessionSecrets", () => {
  const env = { GH_TOKEN: VALUE };

  it("gives the secret its policy bindings, its destinations and its value; the network as it was without --secret", async () => {
    expect(await withSessionSecrets(network, {}, [bound], env)).toBe(network);
    expect(await withSessionSecrets(undefined, { secret: [] }, [], env)).toBeUndefined();
    const out = await withSessionSecrets(
      network,
      { secret: ["GITHUB_TOKEN=env:GH_TOKEN"], secretFile: ["GITHUB_TOKEN=/tmp/secrets/gh"] },
      [bound],
      env,
    );
    const secrets = out?.mode === "allowlist" ? (out.secrets ?? []) : [];
    expect(secrets.map(({ value: _, ...rest }) => rest)).toEqual([
      {
        name: "GITHUB_TOKEN",
        bindings: [
          {
            hosts: ["api.github.com"],
            ports: [443],
            pathPrefixes: ["/repos/acme/"],
            headers: ["authorization"],
          },
        ],
        file: "/tmp/secrets/gh",
      },
    ]);
    expect(await secrets[0]?.value()).toBe(VALUE);
    expect(out?.mode === "allowlist" && out.rules).toBe(network.mode === "allowlist" && network.rules);
  });

  it("reads a file source at each use: a rewrite rotates it, removing the file revokes it", async () => {
    const path = join(dir, "token");
    await writeFile(path, "first\n");
    const out = await withSessionSecrets(network, { secret: [`GITHUB_TOKEN=file:${path}`] }, [bound], {});
    const secret = out?.mode === "allowlist" ? out.secrets?.[0] : undefined;
    expect(await secret?.value()).toBe("first"); // one trailing line break is not part of the value
    await writeFile(path, "second\r\n");
    expect(await secret?.value()).toBe("second");
    await writeFile(path, "");
    expect(await secret?.value()).toBeUndefined();
    // A value no header can carry is given as it is: the gateway's decision refuses it as bad-value.
    await writeFile(path, "line\nbreak\n");
    expect(await secret?.value()).toBe("line\nbreak");
    await writeFile(path, "x".repeat(8192 + 3));
    expect(await secret?.value()).toBeUndefined();
    await unlink(path);
    expect(await secret?.value()).toBeUndefined();
    await writeFile(path, "third");
    expect(await secret?.value()).toBe("third");
  });

  it("refuses a secret without network, without a binding, or whose hosts the network does not let through", async () => {
    const flags = { secret: ["GITHUB_TOKEN=env:GH_TOKEN"] };
    expect(await message(() => withSessionSecrets(undefined, flags, [bound], env))).toBe(
      "--secret needs network access: the egress gateway replaces placeholders on the requests it lets through. Allow the secret's hosts with --allow-net (e.g. --allow-net api.github.com:443) or a policy file's network: section.",
    );
    expect(await message(() => withSessionSecrets(network, flags, [policy("")], env))).toBe(
      "--secret GITHUB_TOKEN: no policy file binds it to hosts; add it to the secrets: section of a policy file you pass with --policy, e.g. secrets: { GITHUB_TOKEN: { hosts: [api.example.com] } }.",
    );
    const tenant = policy(
      "layer: tenant\nsecrets:\n  NPM_TOKEN:\n    hosts: [registry.npmjs.org]\n",
      "t.yaml",
    );
    expect(await message(() => withSessionSecrets(network, flags, [bound, tenant], env))).toBe(
      "--secret GITHUB_TOKEN: the secrets: section of t.yaml (tenant layer) does not name it, so that layer withholds it; bind it there too.",
    );
    const elsewhere = policy(
      "secrets:\n  GITHUB_TOKEN:\n    hosts: [api.github.com]\n    pathPrefixes: [/users/]\n",
      "q.yaml",
      2,
    );
    expect(await message(() => withSessionSecrets(network, flags, [bound, elsewhere], env))).toBe(
      "--secret GITHUB_TOKEN: the policy layers that bind it (p.yaml, q.yaml) share no request it could be sent on (host, port, method, path prefix and header); a lower layer can only narrow a higher one's binding.",
    );
    const pypiOnly: NetworkOptions = {
      mode: "allowlist",
      rules: parseAllowNet("pypi.org,api.github.com:80"),
    };
    expect(await message(() => withSessionSecrets(pypiOnly, flags, [bound], env))).toBe(
      "--secret GITHUB_TOKEN: the network lets through none of the hosts it is bound to (api.github.com:443); allow them, e.g. --allow-net api.github.com:443.",
    );
    const wildcard = policy("secrets:\n  GITHUB_TOKEN:\n    hosts: ['*.github.com']\n");
    expect(await withSessionSecrets(network, flags, [wildcard], env)).toMatchObject({ secrets: [{}] });
  });

  it("checks the source at start, naming the variable or the file, never the value", async () => {
    const run = (source: string, environment: NodeJS.ProcessEnv) =>
      message(() =>
        withSessionSecrets(network, { secret: [`GITHUB_TOKEN=${source}`] }, [bound], environment),
      );
    expect(await run("env:GH_TOKEN", {})).toBe(
      "--secret GITHUB_TOKEN=env:GH_TOKEN: the environment variable GH_TOKEN is not set or empty; export it in the shell that runs warden.",
    );
    expect(await run("env:GH_TOKEN", { GH_TOKEN: "" })).toBe(
      "--secret GITHUB_TOKEN=env:GH_TOKEN: the environment variable GH_TOKEN is not set or empty; export it in the shell that runs warden.",
    );
    expect(await run("env:GH_TOKEN", { GH_TOKEN: `${VALUE}\r\nX-Evil: 1` })).toBe(
      "--secret GITHUB_TOKEN=env:GH_TOKEN: the value in the environment variable GH_TOKEN cannot be sent: it holds a character outside visible ASCII and space (a header cannot carry it); fix it where it is kept (no message shows it).",
    );
    expect(await run("env:GH_TOKEN", { GH_TOKEN: VALUE.repeat(2000) })).toBe(
      "--secret GITHUB_TOKEN=env:GH_TOKEN: the value in the environment variable GH_TOKEN cannot be sent: it is longer than 8192 bytes; fix it where it is kept (no message shows it).",
    );
    const missing = join(dir, "missing");
    expect(await run(`file:${missing}`, {})).toBe(
      `--secret GITHUB_TOKEN=file:${missing}: cannot read ${missing} (ENOENT); name a readable file holding the value.`,
    );
    expect(await run(`file:${dir}`, {})).toBe(
      `--secret GITHUB_TOKEN=file:${dir}: ${dir} is not a regular file; name a file holding the value.`,
    );
    const bad = join(dir, "bad");
    await writeFile(bad, `${VALUE}\n${VALUE}\n`);
    expect(await run(`file:${bad}`, {})).toBe(
      `--secret GITHUB_TOKEN=file:${bad}: the value in ${bad} cannot be sent: it holds a character outside visible ASCII and space (a header cannot carry it); fix it where it is kept (no message shows it).`,
    );
    await writeFile(bad, "\n");
    expect(await run(`file:${bad}`, {})).toBe(
      `--secret GITHUB_TOKEN=file:${bad}: ${bad} is empty; write the value into it.`,
    );
  });
});

/**
 * `--secret` through the CLI's session options (exec, replay, run, mcp): the SessionSecret[] in
 * NetworkOptions.secrets, the `warden: secret …` stderr line, and a value (or its base64 or URL
 * encoding) in no error message and no stderr line.
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Command } from "commander";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { commands } from "../../../src/cli/commands/index.js";
import { sessionOptionsOf } from "../../../src/cli/flags/session-flags.js";
import { secretUseLine } from "../../../src/cli/output/secret-lines.js";
import { warden } from "../../helpers/cli-run.js";

const VALUE = "ghp_s3cr3t+V4lue/x=";
const ENCODINGS = [VALUE, Buffer.from(VALUE).toString("base64"), encodeURIComponent(VALUE)];
const VARIABLE = "WARDEN_TEST_SECRET_VALUE";

let dir: string;
let policyFile: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "warden-secret-session-"));
  policyFile = join(dir, "policy.yaml");
  await writeFile(
    policyFile,
    "rules: []\ndefault: allow\nsecrets:\n  GITHUB_TOKEN:\n    hosts: [api.github.com]\n    methods: [GET]\n",
  );
  process.env[VARIABLE] = VALUE;
});
afterAll(async () => {
  delete process.env[VARIABLE];
  await rm(dir, { recursive: true, force: true });
});

describe("--secret in the CLI's session options", () => {
  it("is a flag of exec, replay, run and mcp, beside --allow-net", () => {
    const program = new Command("warden");
    for (const register of commands) register(program);
    const withFlag = program.commands
      .filter((c) => c.options.some((o) => o.long === "--secret"))
      .map((c) => c.name())
      .sort();
    expect(withFlag).toEqual(["exec", "mcp", "replay", "run"]);
    const withAllowNet = program.commands.filter((c) => c.options.some((o) => o.long === "--allow-net"));
    expect(withAllowNet.map((c) => c.name()).sort()).toEqual(withFlag);
  });

  it("puts the secret, bound by the policy file, into the sandbox's NetworkOptions", async () => {
    const options = await sessionOptionsOf({
      policy: [policyFile],
      allowNet: ["api.github.com:443"],
      secret: [`GITHUB_TOKEN=env:${VARIABLE}`],
      secretEnv: ["GITHUB_TOKEN=GH_TOKEN"],
    });
    const network = options.sandbox?.network;
    expect(network?.mode).toBe("allowlist");
    const secrets = network?.mode === "allowlist" ? (network.secrets ?? []) : [];
    expect(secrets.map(({ value: _, ...rest }) => rest)).toEqual([
      {
        name: "GITHUB_TOKEN",
        bindings: [{ hosts: ["api.github.com"], ports: [443], methods: ["GET"], headers: ["authorization"] }],
        env: "GH_TOKEN",
      },
    ]);
    expect(await secrets[0]?.value()).toBe(VALUE);
    // Each request that carried a placeholder is one stderr line, names only.
    const lines: string[] = [];
    const spy = vi.spyOn(process.stderr, "write").mockImplementation((chunk) => {
      lines.push(String(chunk));
      return true;
    });
    try {
      if (network?.mode === "allowlist")
        network.onSecretUse?.({
          sessionId: options.sessionId ?? "",
          time: "2026-12-07T12:00:00.000Z",
          secrets: ["GITHUB_TOKEN"],
          decision: "refuse",
          reason: "unbound",
          host: "evil.example",
          port: 443,
          method: "POST",
          path: "/upload",
        });
    } finally {
      spy.mockRestore();
    }
    expect(lines).toEqual([
      "warden: secret refuse GITHUB_TOKEN POST evil.example:443/upload reason=unbound\n",
    ]);
  });

  it("writes a secret-use line terminal-safe (host and path come from the sandbox)", () => {
    expect(
      secretUseLine({
        sessionId: "s",
        time: "t",
        secrets: ["A", "B"],
        decision: "use",
        host: "api.github.com",
        port: 443,
        method: "GET",
        path: "/x\x1b]52;c;aGk=\x07\n",
      }),
    ).toBe("warden: secret use A,B GET api.github.com:443/x\\x1b]52;c;aGk=\\x07\\x0a\n");
  });

  it("fails `warden exec` with --secret but no network at start, exit 2, naming the fix", async () => {
    const run = await warden([
      "exec",
      "ls",
      "{}",
      "--policy",
      policyFile,
      "--secret",
      `GITHUB_TOKEN=env:${VARIABLE}`,
    ]);
    expect(run.exitCode).toBe(2);
    expect(run.stderr).toBe(
      "InvalidArgumentError: --secret needs network access: the egress gateway replaces placeholders on the requests it lets through. Allow the secret's hosts with --allow-net (e.g. --allow-net api.github.com:443) or a policy file's network: section.",
    );
  });

  it("puts the value, its base64 or its URL encoding in no error message and no stderr line", async () => {
    const file = join(dir, "value");
    await writeFile(file, `${VALUE}\n${VALUE}`);
    const runs = [
      ["--secret", VALUE],
      ["--secret", `GITHUB_TOKEN=${VALUE}`],
      ["--secret", `GITHUB_TOKEN=env:${VALUE}`],
      ["--secret", `${VALUE}=env:${VARIABLE}`],
      ["--secret", `GITHUB_TOKEN=file:${file}`, "--allow-net", "api.github.com:443"],
      ["--secret", `OTHER=env:${VARIABLE}`, "--allow-net", "api.github.com:443"],
      ["--secret", `GITHUB_TOKEN=env:${VARIABLE}`, "--allow-net", "pypi.org"],
      ["--secret", `GITHUB_TOKEN=env:${VARIABLE}`, "--secret-env", `${VALUE}=X`],
      ["--secret", `GITHUB_TOKEN=env:${VARIABLE}`, "--secret-env", `GITHUB_TOKEN=${VALUE}`],
      ["--secret", `GITHUB_TOKEN=env:${VARIABLE}`, "--secret-file", `GITHUB_TOKEN=${VALUE}`],
    ];
    const outputs: string[] = [];
    for (const args of runs) {
      const run = await warden(["exec", "ls", "{}", "--policy", policyFile, ...args]);
      expect(run.exitCode).toBe(2);
      outputs.push(run.stdout + run.stderr);
    }
    expect(outputs.map((o) => o.replace(/:.*/s, ""))).toEqual(
      Array(runs.length).fill("InvalidArgumentError"),
    );
    for (const output of outputs) for (const encoded of ENCODINGS) expect(output).not.toContain(encoded);
  });
});

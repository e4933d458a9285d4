/** `warden audit verify` and `warden audit export` on a log written by the chain writer. */
import { createPublicKey, generateKeyPairSync } from "node:crypto";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Command } from "commander";
import { afterEach, beforeEach, expect, it, vi } from "vitest";
import { auditKeyId, lineHash } from "../../../src/audit/index.js";
import { registerAudit } from "../../../src/cli/commands/audit.js";
import { InvalidArgumentError } from "../../../src/errors.js";
import { sessionLog } from "../audit/chain-fixture.js";

const key = generateKeyPairSync("ed25519").privateKey;
const log = sessionLog(key);
let dir: string;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "warden-audit-cli-"));
  await writeFile(join(dir, "audit.jsonl"), `${log.join("\n")}\n`);
  await writeFile(
    join(dir, "edited.jsonl"),
    `${log.map((l, i) => (i === 2 ? l.replace('"bytes":3', '"bytes":9') : l)).join("\n")}\n`,
  );
  await writeFile(join(dir, "pub.pem"), createPublicKey(key).export({ type: "spki", format: "pem" }));
  await writeFile(
    join(dir, "rsa.pem"),
    generateKeyPairSync("rsa", { modulusLength: 1024 }).publicKey.export({ type: "spki", format: "pem" }),
  );
});
afterEach(async () => {
  process.exitCode = undefined;
  vi.restoreAllMocks();
  await rm(dir, { recursive: true, force: true });
});

/** Runs `warden audit …args`; resolves its exit code and what it printed. */
async function run(...args: string[]): Promise<{ code: number; out: string; err: string }> {
  const out: string[] = [];
  const err: string[] = [];
  vi.spyOn(console, "log").mockImplementation((line: string) => void out.push(line));
  vi.spyOn(console, "error").mockImplementation((line: string) => void err.push(line));
  vi.spyOn(process.stdout, "write").mockImplementation((chunk) => out.push(String(chunk)) > 0);
  const program = new Command().exitOverride();
  registerAudit(program);
  await program.parseAsync(["node", "warden", "audit", ...args.map((a) => a.replace("DIR", dir))]);
  const code = Number(process.exitCode ?? 0);
  process.exitCode = undefined;
  return { code, out: out.join("\n"), err: err.join("\n") };
}

it("verify: exit 0 intact, 1 tampered (naming the record); a bad key or file is InvalidArgumentError (exit 2)", async () => {
  const intact = await run("verify", "DIR/audit.jsonl", "--public-key", "DIR/pub.pem");
  expect(intact.code).toBe(0);
  expect(intact.out.split("\n").slice(0, 2)).toEqual([
    "intact: 12 record(s) in 3 stream(s), 4 checkpoint(s)",
    `signed by key ${auditKeyId(key)} (the key given with --public-key)`,
  ]);
  expect(await run("verify", "DIR/edited.jsonl")).toEqual({
    code: 1,
    out: "tampered: line 3 (tenant:alpha seq 1): edited: its hash is not the prev of the stream's next record (line 4, seq 2)",
    err: "",
  });
  await expect(run("verify", "DIR/audit.jsonl", "--public-key", "DIR/rsa.pem")).rejects.toThrow(
    new InvalidArgumentError(
      `--public-key ${dir}/rsa.pem is an rsa public key; warden signs audit checkpoints with ed25519 and needs its public key in PEM (make one with \`openssl genpkey -algorithm ed25519 -out audit-key.pem\`; its public half: \`openssl pkey -in audit-key.pem -pubout\`).`,
    ),
  );
  await expect(run("verify", "DIR/none.jsonl")).rejects.toThrow(
    `Cannot read the audit log ${dir}/none.jsonl (ENOENT); give the path of a warden serve audit log (config auditLog).`,
  );
});

it("export: jsonl adds each line's hash, ocsf gives one event per record; a tampered log exports nothing", async () => {
  const jsonl = await run("export", "DIR/audit.jsonl", "--format", "jsonl");
  const records = jsonl.out
    .trimEnd()
    .split("\n")
    .map((l) => JSON.parse(l) as Record<string, unknown>);
  expect(records).toHaveLength(12);
  expect(records[0]).toEqual({ ...JSON.parse(log[0]!), hash: lineHash(log[0]!) });
  const ocsf = await run("export", "DIR/audit.jsonl", "--format", "ocsf");
  const events = ocsf.out
    .trimEnd()
    .split("\n")
    .map((l) => JSON.parse(l) as { class_uid: number; metadata: { uid: string } });
  expect(events.map((e) => e.class_uid)).toEqual([6003, 6003, 6003, 6003, 6003, 0, 0, 0, 6003, 6003, 0, 0]);
  expect(events[2]!.metadata.uid).toBe(lineHash(log[2]!));
  expect(await run("export", "DIR/edited.jsonl", "--format", "ocsf")).toEqual({
    code: 1,
    out: "",
    err: "warden audit export: nothing exported: tampered: line 3 (tenant:alpha seq 1): edited: its hash is not the prev of the stream's next record (line 4, seq 2)",
  });
  await expect(run("export", "DIR/audit.jsonl", "--format", "csv")).rejects.toThrow(
    "--format must be one of jsonl, ocsf; got 'csv'.",
  );
});

it("verify --public-key: a private key is refused (exit 2), and a log no checkpoint signs is not authenticated (exit 1)", async () => {
  await writeFile(join(dir, "private.pem"), key.export({ type: "pkcs8", format: "pem" }));
  await expect(run("verify", "DIR/audit.jsonl", "--public-key", "DIR/private.pem")).rejects.toThrow(
    new InvalidArgumentError(
      `--public-key ${dir}/private.pem holds a private key; pass its public half (\`openssl pkey -in ${dir}/private.pem -pubout\`) and keep the private key on the server.`,
    ),
  );
  // The first two lines of the fixture: no checkpoint yet.
  await writeFile(join(dir, "unsigned.jsonl"), `${log.slice(0, 2).join("\n")}\n`);
  const unsigned = await run("verify", "DIR/unsigned.jsonl", "--public-key", "DIR/pub.pem");
  expect(unsigned.code).toBe(1);
  expect(unsigned.out.split("\n").at(-1)).toBe(
    `not signed: no checkpoint in the file, so the key in ${dir}/pub.pem checked nothing`,
  );
  expect((await run("verify", "DIR/unsigned.jsonl")).code).toBe(0);
});

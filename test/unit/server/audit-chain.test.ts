/** The server's file audit log as a hash chain: restart, signing key, session end (src/server/audit.ts). */
import { generateKeyPairSync } from "node:crypto";
import { mkdtemp, readFile, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, expect, it } from "vitest";
import { formatVerifyReport, verifyAuditLines } from "../../../src/audit/index.js";
import { InvalidArgumentError } from "../../../src/errors.js";
import { createFileAuditLog, loadAuditSigningKey } from "../../../src/server/audit.js";

let dir: string;
let path: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "warden-audit-chain-"));
  path = join(dir, "state", "audit.jsonl");
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

const lines = async () => (await readFile(path, "utf8")).trimEnd().split("\n");
const created = (session: string) => ({
  kind: "session" as const,
  event: "created" as const,
  tenant: "alpha",
  session,
});
const closed = (session: string) => ({ ...created(session), event: "closed" as const, reason: "deleted" });

it("a restarted log continues each stream's chain; a session's end and shutdown sign every stream", async () => {
  const first = createFileAuditLog(path);
  first.write(created("s1"));
  first.write(created("s2"));
  first.close();
  const second = createFileAuditLog(path);
  second.write(closed("s1"));
  second.endSession("alpha", "s1");
  second.write(closed("s2"));
  second.endSession("alpha", "s2");
  second.checkpointAll();
  second.close();
  expect((await stat(path)).mode & 0o777).toBe(0o600);
  const report = verifyAuditLines(await lines());
  expect(formatVerifyReport(report)).toEqual([
    "intact: 10 record(s) in 4 stream(s), 5 checkpoint(s)",
    `signed by key(s) ${second.keyId} announced in the file (pass --public-key to check they are yours)`,
    "signed to their last record: 4 stream(s)",
  ]);
  // The second log's first line links to the first log's last line of the same streams.
  expect(JSON.parse((await lines())[2]!).chain.map((l: { seq: number }) => l.seq)).toEqual([2, 1]);
});

it("checkpoints every auditCheckpointEvery records of a stream, with the operator's key announced once", async () => {
  const signingKey = generateKeyPairSync("ed25519").privateKey;
  const log = createFileAuditLog(path, { signingKey, checkpointEvery: 2 });
  for (let i = 0; i < 4; i++)
    log.write({ kind: "request", method: "GET", route: "/metrics", status: 200, bytes: 1, durationMs: 1 });
  log.close();
  const kinds = (await lines()).map(
    (l) => JSON.parse(l) as { kind: string; source?: string; stream?: string },
  );
  expect(kinds.map((k) => k.kind)).toEqual([
    "request",
    "request",
    "audit-key",
    "checkpoint",
    "request",
    "request",
    "checkpoint",
  ]);
  expect(kinds[2]!.source).toBe("config");
  const report = verifyAuditLines(await lines(), { publicKey: generateKeyPairSync("ed25519").publicKey });
  expect(report.fault?.kind).toBe("unknown-key");
});

it("a key made at start is told to onGeneratedKey (PEM public half), never written to the state", async () => {
  const told: string[] = [];
  const log = createFileAuditLog(path, { onGeneratedKey: (pem, keyId) => told.push(keyId, pem) });
  expect(told).toEqual([log.keyId, log.publicKeyPem]);
  expect(log.publicKeyPem).toMatch(/^-----BEGIN PUBLIC KEY-----\n/);
  log.close();
});

it("auditSigningKey: a key that is not ed25519, or not a key, is refused naming the field and the fix", async () => {
  const rsa = join(dir, "rsa.pem");
  await writeFile(
    rsa,
    generateKeyPairSync("rsa", { modulusLength: 1024 }).privateKey.export({ type: "pkcs8", format: "pem" }),
  );
  expect(() => loadAuditSigningKey(rsa)).toThrow(
    new InvalidArgumentError(
      `auditSigningKey ${rsa} is an rsa private key; warden signs audit checkpoints with ed25519 and needs its private key in PEM (make one with \`openssl genpkey -algorithm ed25519 -out audit-key.pem\`; its public half: \`openssl pkey -in audit-key.pem -pubout\`).`,
    ),
  );
  const text = join(dir, "text.pem");
  await writeFile(text, "not a key\n");
  expect(() => loadAuditSigningKey(text)).toThrow(
    `auditSigningKey ${text} is not a readable PEM private key (`,
  );
  const ed = join(dir, "ed.pem");
  await writeFile(ed, generateKeyPairSync("ed25519").privateKey.export({ type: "pkcs8", format: "pem" }));
  expect(loadAuditSigningKey(ed).asymmetricKeyType).toBe("ed25519");
});

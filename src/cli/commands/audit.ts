/**
 * `warden audit verify FILE [--public-key PEM]`: checks the hash chain and signed checkpoints of a
 * `warden serve` audit log (src/audit verify.ts) and prints the first removed, reordered, inserted
 * or edited record, or that every stream is intact and how far checkpoints sign it. Exit 0 intact,
 * 1 tampered, 2 bad input (no such file, an empty file, a key that is not an ed25519 public key).
 * `warden audit export FILE --format jsonl|ocsf [--public-key PEM]`: verifies first (a tampered
 * log exports nothing, exit 1), then prints one JSON line per record: the record with its line's
 * `hash` (jsonl), or its OCSF 1.3.0 event (src/audit ocsf.ts).
 */
import { createPublicKey, type KeyObject } from "node:crypto";
import { readFile } from "node:fs/promises";
import type { Command } from "commander";
import {
  type AuditVerifyReport,
  assertEd25519,
  formatVerifyReport,
  lineHash,
  linksOf,
  toOcsf,
  verifyAuditLines,
} from "../../audit/index.js";
import { InvalidArgumentError } from "../../errors.js";

/** The export formats. */
const FORMATS = ["jsonl", "ocsf"] as const;

/** The file's lines (without the empty string after its last newline); InvalidArgumentError when unreadable or empty. */
async function readLines(file: string): Promise<string[]> {
  let text: string;
  try {
    text = await readFile(file, "utf8");
  } catch (err) {
    throw new InvalidArgumentError(
      `Cannot read the audit log ${file} (${(err as NodeJS.ErrnoException).code ?? (err as Error).message}); give the path of a warden serve audit log (config auditLog).`,
    );
  }
  const lines = text.split("\n");
  if (lines.at(-1) === "") lines.pop();
  if (lines.length === 0)
    throw new InvalidArgumentError(`The audit log ${file} is empty: there is nothing to verify.`);
  return lines;
}

/** The ed25519 public key in the PEM file `file` (--public-key); InvalidArgumentError otherwise. */
async function readPublicKey(file: string): Promise<KeyObject> {
  let key: KeyObject;
  try {
    const pem = await readFile(file);
    // createPublicKey takes a private key too (it derives the public half): a verifier never needs one.
    if (pem.includes("PRIVATE KEY"))
      throw new InvalidArgumentError(
        `--public-key ${file} holds a private key; pass its public half (\`openssl pkey -in ${file} -pubout\`) and keep the private key on the server.`,
      );
    key = createPublicKey(pem);
  } catch (err) {
    if (err instanceof InvalidArgumentError) throw err;
    throw new InvalidArgumentError(
      `--public-key ${file} is not a readable PEM public key (${(err as Error).message}); give the PEM that warden serve printed at start, or \`openssl pkey -in KEY -pubout\` of its auditSigningKey.`,
    );
  }
  assertEd25519(key, "public", `--public-key ${file}`);
  return key;
}

async function verifyFile(
  file: string,
  flags: { publicKey?: string },
): Promise<[string[], AuditVerifyReport]> {
  const lines = await readLines(file);
  const publicKey = flags.publicKey ? await readPublicKey(flags.publicKey) : undefined;
  return [lines, verifyAuditLines(lines, publicKey ? { publicKey } : {})];
}

async function verify(file: string, flags: { publicKey?: string }): Promise<void> {
  const [, report] = await verifyFile(file, flags);
  for (const line of formatVerifyReport(report)) console.log(line);
  if (report.fault) process.exitCode = 1;
  else if (flags.publicKey && report.checkpoints === 0) {
    // Asked to authenticate the log, but no checkpoint signs any of it: it cannot be.
    console.log(`not signed: no checkpoint in the file, so the key in ${flags.publicKey} checked nothing`);
    process.exitCode = 1;
  }
}

async function exportLog(file: string, flags: { publicKey?: string; format: string }): Promise<void> {
  if (!(FORMATS as readonly string[]).includes(flags.format)) {
    throw new InvalidArgumentError(`--format must be one of ${FORMATS.join(", ")}; got '${flags.format}'.`);
  }
  const [lines, report] = await verifyFile(file, flags);
  if (report.fault) {
    console.error(`warden audit export: nothing exported: tampered: ${report.fault.message}`);
    process.exitCode = 1;
    return;
  }
  const out: string[] = [];
  for (const line of lines) {
    const record = JSON.parse(line) as Record<string, unknown>;
    if (!linksOf(record)) continue;
    const hash = lineHash(line);
    out.push(JSON.stringify(flags.format === "ocsf" ? toOcsf(record, hash) : { ...record, hash }));
  }
  process.stdout.write(out.length > 0 ? `${out.join("\n")}\n` : "");
}

/** Registers `warden audit verify` and `warden audit export`. */
export function registerAudit(program: Command): void {
  const audit = program.command("audit").description("Verify and export the audit log of warden serve");
  audit
    .command("verify")
    .description(
      "Check the audit log's hash chain and signed checkpoints (exit 0 intact, 1 tampered, 2 bad input)",
    )
    .argument("<file>", "the audit log (config auditLog; default <stateDir>/audit.jsonl)")
    .option("--public-key <pem>", "PEM ed25519 public key the checkpoints must be signed by")
    .action(verify);
  audit
    .command("export")
    .description("Verify the audit log, then print its records as JSON lines or OCSF 1.3.0 events")
    .argument("<file>", "the audit log")
    .requiredOption("--format <format>", `one of ${FORMATS.join(", ")}`)
    .option("--public-key <pem>", "PEM ed25519 public key the checkpoints must be signed by")
    .action(exportLog);
}

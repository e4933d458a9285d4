/**
 * Signed checkpoints of the audit chain (pure: no I/O). A checkpoint is a record of the stream it
 * signs (`kind: "checkpoint"`, `stream`), placed in the chain like any other; its ed25519 signature
 * is over the fixed text
 *
 *     warden-audit-checkpoint v1\n<stream>\n<seq>\n<prev>
 *
 * where seq and prev are the checkpoint's own link in that stream: the hash of the stream's record
 * before it, which through the chain fixes every earlier record of the stream. A key is named by
 * its id: the first 16 hex digits of the sha256 of its raw 32-byte public key.
 */
import { createHash, createPublicKey, type KeyObject, sign, verify } from "node:crypto";
import { InvalidArgumentError } from "../errors.js";

/** The first line of every signed payload (its version: a new payload format gets a new one). */
export const CHECKPOINT_PAYLOAD_TAG = "warden-audit-checkpoint v1";

/** The bytes a checkpoint of `stream` at `seq`, linking to `prev`, signs. */
export function checkpointPayload(stream: string, seq: number, prev: string): Buffer {
  return Buffer.from(`${CHECKPOINT_PAYLOAD_TAG}\n${stream}\n${seq}\n${prev}`, "utf8");
}

/** The raw 32-byte public key of an ed25519 key (public or private). */
function rawPublicKey(key: KeyObject): Buffer {
  const pub = key.type === "private" ? createPublicKey(key) : key;
  const jwk = pub.export({ format: "jwk" });
  return Buffer.from(jwk.x ?? "", "base64url");
}

/** First 16 hex digits of sha256(raw public key) of an ed25519 key (public or private). */
export function auditKeyId(key: KeyObject): string {
  return createHash("sha256").update(rawPublicKey(key)).digest("hex").slice(0, 16);
}

/**
 * Throws InvalidArgumentError unless `key` is an ed25519 key of `type`; `what` names where it came
 * from (a config field, a flag) in the message.
 */
export function assertEd25519(key: KeyObject, type: "private" | "public", what: string): void {
  if (key.type !== type || key.asymmetricKeyType !== "ed25519") {
    const got = key.asymmetricKeyType ? `an ${key.asymmetricKeyType} ${key.type} key` : `a ${key.type} key`;
    throw new InvalidArgumentError(
      `${what} is ${got}; warden signs audit checkpoints with ed25519 and needs its ${type} key in PEM ` +
        "(make one with `openssl genpkey -algorithm ed25519 -out audit-key.pem`; " +
        "its public half: `openssl pkey -in audit-key.pem -pubout`).",
    );
  }
}

/** base64 ed25519 signature of the checkpoint payload, with `privateKey`. */
export function signCheckpoint(privateKey: KeyObject, stream: string, seq: number, prev: string): string {
  return sign(null, checkpointPayload(stream, seq, prev), privateKey).toString("base64");
}

/** True when `signature` (base64) is `publicKey`'s signature of the checkpoint payload. */
export function checkpointSignatureValid(
  publicKey: KeyObject,
  stream: string,
  seq: number,
  prev: string,
  signature: string,
): boolean {
  try {
    return verify(null, checkpointPayload(stream, seq, prev), publicKey, Buffer.from(signature, "base64"));
  } catch {
    return false;
  }
}

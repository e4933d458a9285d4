/**
 * Git's object ids and its binary patch format, so a patch with binary files is one `git apply`
 * takes: a full `index <sha1>..<sha1>` line and a `GIT binary patch` section with `literal` hunks
 * (zlib-deflated, base85 in lines of at most 52 bytes, each prefixed by a length letter), forward
 * (new content) and reverse (old content), as `git diff --binary` writes them (git's diff.c,
 * emit_binary_diff_body, and base85.c).
 */
import { createHash } from "node:crypto";
import { deflateSync } from "node:zlib";

/** The all-zero object id git writes for a missing side. */
export const NULL_OID = "0".repeat(40);

/** Git's blob id of `bytes` (sha1 of "blob <length>\0" + bytes), 40 hex digits; NULL_OID for null. */
export function gitBlobId(bytes: Buffer | null): string {
  if (bytes === null) return NULL_OID;
  return createHash("sha1").update(`blob ${bytes.length}\0`).update(bytes).digest("hex");
}

const BASE85 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz!#$%&()*+-;<=>?@^_`{|}~";

/** Base85 of `chunk` as git encodes it (groups of 4 bytes, zero-padded, 5 characters each). */
function encode85(chunk: Buffer): string {
  let out = "";
  for (let i = 0; i < chunk.length; i += 4) {
    let acc = 0;
    for (let j = 0; j < 4; j++) acc = acc * 256 + (chunk[i + j] ?? 0);
    const group = new Array<string>(5);
    for (let k = 4; k >= 0; k--) {
      group[k] = BASE85[acc % 85]!;
      acc = Math.floor(acc / 85);
    }
    out += group.join("");
  }
  return out;
}

/** One `literal <size>` hunk of `bytes` (its lines, then an empty line). */
function literal(bytes: Buffer): string[] {
  const deflated = deflateSync(bytes);
  const lines = [`literal ${bytes.length}`];
  for (let i = 0; i < deflated.length; i += 52) {
    const chunk = deflated.subarray(i, i + 52);
    const len =
      chunk.length <= 26
        ? String.fromCharCode(64 + chunk.length)
        : String.fromCharCode(96 + chunk.length - 26);
    lines.push(len + encode85(chunk));
  }
  lines.push("");
  return lines;
}

/** The `GIT binary patch` body turning `from` into `to` (null: absent), lines without the final newline. */
export function binaryPatchBody(from: Buffer | null, to: Buffer | null): string[] {
  return ["GIT binary patch", ...literal(to ?? Buffer.alloc(0)), ...literal(from ?? Buffer.alloc(0))];
}

/**
 * A session's CA certificate on the host side. The gateway's entrypoint (images/gateway) makes a
 * fresh CA per session, keeps its key in the gateway's tmpfs, and sends only its certificate to
 * warden, on stderr, as one `WARDEN-SESSION-CA <base64 PEM>` line. warden writes that certificate
 * to a file the sandbox gets read-only at CA_BUNDLE_PATH (gateway.ts): the sandbox's TLS clients
 * trust the gateway, which opens each tunnel to check the requests inside it. The file's path is
 * derived from the session id, so a restarted controller that adopts the session (adopt.ts)
 * removes the same file when the session ends.
 */
import { createHash } from "node:crypto";
import { mkdir, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** Marker of the gateway's stderr line that carries the session CA certificate. */
export const SESSION_CA_PREFIX = "WARDEN-SESSION-CA";

const PEM_CERT = /^-----BEGIN CERTIFICATE-----\n[A-Za-z0-9+/=\n]+-----END CERTIFICATE-----\n?$/;

/**
 * The PEM certificate of a `WARDEN-SESSION-CA <base64>` line, or null for any other line and for a
 * payload that is not exactly one PEM certificate (a key is never accepted).
 */
export function parseSessionCaLine(line: string): string | null {
  const [tag, payload, extra] = line.trim().split(/\s+/);
  if (tag !== SESSION_CA_PREFIX || !payload || extra !== undefined) return null;
  const pem = Buffer.from(payload, "base64").toString("utf8");
  return PEM_CERT.test(pem) ? pem : null;
}

/** Where the session CA certificate of `sessionId` is written on the host (the same path every time). */
export function sessionCaPath(sessionId: string): string {
  const name = createHash("sha256").update(sessionId).digest("hex").slice(0, 32);
  return join(tmpdir(), "warden-egress-ca", `${name}.pem`);
}

/** Writes the certificate (world-readable: the sandbox's user reads it through a bind mount); resolves its path. */
export async function writeSessionCa(sessionId: string, pem: string): Promise<string> {
  const path = sessionCaPath(sessionId);
  await mkdir(join(path, ".."), { recursive: true, mode: 0o755 });
  await writeFile(path, pem, { mode: 0o644 });
  return path;
}

/** Removes the session's certificate file; a missing file is fine. */
export async function removeSessionCa(sessionId: string): Promise<void> {
  await rm(sessionCaPath(sessionId), { force: true });
}

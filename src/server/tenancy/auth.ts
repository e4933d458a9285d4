/**
 * Bearer-key authentication. Keys are compared as SHA-256 digests with `timingSafeEqual`, against
 * every configured key (no early exit), so neither the match position nor the prefix leaks timing.
 */
import { createHash, timingSafeEqual } from "node:crypto";
import type { TenantConfig } from "../config/index.js";
import { UnauthorizedError } from "./errors.js";

/** Lower-case hex SHA-256 of a token: what the config file stores. */
export function hashKey(token: string): string {
  return createHash("sha256").update(token, "utf8").digest("hex");
}

/** Who made a request: the tenant and the id of the key used. */
export interface Principal {
  tenant: TenantConfig;
  keyId: string;
}

/** Maps bearer tokens to tenants. */
export class KeyRing {
  private readonly entries: { digest: Buffer; tenant: TenantConfig; keyId: string }[];

  constructor(tenants: readonly TenantConfig[]) {
    this.entries = tenants.flatMap((tenant) =>
      tenant.keys.map((k) => ({ digest: Buffer.from(k.sha256, "hex"), tenant, keyId: k.id })),
    );
  }

  /** The principal for an `Authorization` header value; throws UnauthorizedError otherwise. */
  authenticate(header: string | undefined): Principal {
    const match = /^Bearer\s+(\S+)\s*$/i.exec(header ?? "");
    if (!match?.[1]) throw new UnauthorizedError();
    const digest = createHash("sha256").update(match[1], "utf8").digest();
    let found: Principal | undefined;
    for (const entry of this.entries) {
      if (timingSafeEqual(digest, entry.digest) && !found)
        found = { tenant: entry.tenant, keyId: entry.keyId };
    }
    if (!found) throw new UnauthorizedError();
    return found;
  }
}

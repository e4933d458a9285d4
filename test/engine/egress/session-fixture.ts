/**
 * One allowlist session on the egress testbed for a describe block (beforeAll/afterAll): the
 * testbed, optionally a DNS test host that the gateway resolves with (`network.resolvers`), the
 * session's sandbox with the given files written, its connection records, and a wait for them.
 * `afterAll` removes all of it and checks that the tenant left nothing behind.
 */
import { afterAll, beforeAll, expect } from "vitest";
import type { ConnectionAudit, NetworkOptions, NetworkRule } from "../../../src/egress/index.js";
import { createSandbox } from "../../../src/sandbox/index.js";
import type { Sandbox } from "../../../src/sandbox/types.js";
import { leftovers } from "../../helpers/sandbox-fixture.js";
import { type DnsTestHost, startDnsTestHost } from "./dns-host.js";
import { type EgressTestbed, startEgressTestbed } from "./testbed.js";

/** What useEgressSession gives a describe block (its getters throw before beforeAll ran). */
export interface EgressSession {
  bed(): EgressTestbed;
  sandbox(): Sandbox;
  /** The DNS test host (only with `dns: true`). */
  dns(): DnsTestHost;
  /** Every connection record of the session so far, in order. */
  audit: ConnectionAudit[];
  /** The records matching `match`, once there are at least `count` (the test's timeout bounds the wait). */
  recordsWhere(match: (r: ConnectionAudit) => boolean, count?: number): Promise<ConnectionAudit[]>;
}

/**
 * Registers the hooks. `rules` are the session's; the gateway leaves through the public test
 * network (and the private one with `privateNetwork`, so a connection to a private address would
 * reach its host); the sandbox trusts the session CA and the gateway the testbed's CA.
 */
export function useEgressSession(input: {
  tenant: string;
  rules: NetworkRule[];
  files?: Record<string, string>;
  privateNetwork?: boolean;
  dns?: boolean;
  /** More of the session's network options (an approver, secrets). */
  network?: Partial<Omit<Extract<NetworkOptions, { mode: "allowlist" }>, "mode" | "rules">>;
}): EgressSession {
  let bed: EgressTestbed | undefined;
  let dns: DnsTestHost | undefined;
  let sandbox: Sandbox | undefined;
  const audit: ConnectionAudit[] = [];
  const need = <T>(value: T | undefined, what: string): T => {
    if (value === undefined) throw new Error(`${what} is not started (useEgressSession's beforeAll)`);
    return value;
  };

  beforeAll(async () => {
    bed = await startEgressTestbed();
    if (input.dns) dns = await startDnsTestHost(bed.publicNetwork);
    const network: NetworkOptions = {
      mode: "allowlist",
      rules: input.rules,
      egressNetworks: input.privateNetwork ? [bed.publicNetwork, bed.privateNetwork] : [bed.publicNetwork],
      caBundlePath: bed.caBundlePath,
      ...(dns ? { resolvers: [dns.address] } : {}),
      onConnection: (r) => audit.push(r),
      ...input.network,
    };
    sandbox = await createSandbox({ tenant: input.tenant, ttlMs: 120_000, network });
    for (const [path, text] of Object.entries(input.files ?? {}))
      await sandbox.writeFile(path, Buffer.from(text));
  }, 120_000);

  afterAll(async () => {
    await sandbox?.destroy();
    await dns?.dispose();
    await bed?.dispose();
    expect(await leftovers(input.tenant)).toEqual([]);
  });

  return {
    bed: () => need(bed, "the testbed"),
    sandbox: () => need(sandbox, "the sandbox"),
    dns: () => need(dns, "the DNS test host"),
    audit,
    async recordsWhere(match, count = 1) {
      // A record arrives when its connection ends.
      while (audit.filter(match).length < count) await new Promise((r) => setTimeout(r, 100));
      return audit.filter(match);
    },
  };
}

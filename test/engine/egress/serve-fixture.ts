/**
 * The hooks of a describe block that runs `warden serve` processes against the egress testbed
 * (beforeAll/afterAll): the testbed, a test directory, the bundled CLI, and the servers started,
 * all removed afterwards with the tenant's containers and session networks, which must be none.
 */
import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, expect } from "vitest";
import { bundleCli, cleanUpServe, type ServeChild } from "../../helpers/server-fixture.js";
import { type EgressTestbed, removeTenantNetworks, startEgressTestbed } from "./testbed.js";

/** What useEgressServe gives: getters valid once beforeAll ran, and the list to push servers to. */
export interface EgressServe {
  bed(): EgressTestbed;
  /** The test directory (configs and state go here). */
  dir(): string;
  /** The bundled CLI to spawn `warden serve` from. */
  main(): string;
  children: ServeChild[];
}

/** Registers the hooks for `tenant`; `prefix` names the test directory. */
export function useEgressServe(tenant: string, prefix: string): EgressServe {
  let bed: EgressTestbed | undefined;
  let dir: string | undefined;
  let main: string | undefined;
  const children: ServeChild[] = [];
  const need = <T>(value: T | undefined, what: string): T => {
    if (value === undefined) throw new Error(`${what} is not ready (useEgressServe's beforeAll)`);
    return value;
  };
  beforeAll(async () => {
    bed = await startEgressTestbed();
    dir = await mkdtemp(join(tmpdir(), prefix));
    main = await bundleCli();
  }, 120_000);
  afterAll(async () => {
    await cleanUpServe(children, tenant, dir, main);
    const left = await removeTenantNetworks(tenant);
    await bed?.dispose();
    expect(left).toEqual([]);
  }, 60_000);
  return {
    bed: () => need(bed, "the testbed"),
    dir: () => need(dir, "the test directory"),
    main: () => need(main, "the CLI bundle"),
    children,
  };
}

/** The Docker pool backend's checks that run before any container exists. */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { InvalidArgumentError, NotFoundError } from "../../../../src/errors.js";
import { dockerPoolBackend, type PoolRequest } from "../../../../src/sandbox/index.js";

describe("dockerPoolBackend", () => {
  it("refuses a ro or rw workspace in a claim: a spare has no bind mount of the claimer's directory", async () => {
    const backend = dockerPoolBackend({ tenant: "test-unit-pool" });
    for (const mode of ["ro", "rw"]) {
      // A JavaScript caller (or a cast) can pass what CopyWorkspace's type refuses.
      const request = {
        template: {},
        claim: { workspace: { hostPath: "/tmp", mode } },
      } as unknown as PoolRequest;
      const err = await backend.keyOf(request).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(InvalidArgumentError);
      expect((err as Error).message).toBe(
        `a pooled sandbox takes a copy-mode workspace only, got mode "${mode}"; create a ${mode} sandbox with createSandbox instead.`,
      );
    }
  });

  it("keys a claim by its template and policy: the claim's session, signal and workspace are left out", async () => {
    const backend = dockerPoolBackend({ tenant: "test-unit-pool" });
    const dir = await mkdtemp(join(tmpdir(), "warden-pool-key-"));
    const plain = await backend.keyOf({ template: { image: "img:1" }, policyHash: "p" });
    const claimed = await backend
      .keyOf({
        template: { image: "img:1" },
        claim: { sessionId: "s-1", signal: new AbortController().signal, workspace: { hostPath: dir } },
        policyHash: "p",
      })
      .finally(() => rm(dir, { recursive: true }));
    expect(claimed).toBe(plain);
    expect(await backend.keyOf({ template: { image: "img:1" }, policyHash: "q" })).not.toBe(plain);
  });

  it("refuses a claim whose workspace is missing before any idle entry is taken", async () => {
    const backend = dockerPoolBackend({ tenant: "test-unit-pool" });
    const request = { template: {}, claim: { workspace: { hostPath: "/nonexistent-warden-ws" } } };
    await expect(backend.keyOf(request)).rejects.toBeInstanceOf(NotFoundError);
  });
});

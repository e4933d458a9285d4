/**
 * CLI errors name the flag the user typed, not the library's option field (issue 36 item 9):
 * `--memory`, not `limits.memoryBytes` (src/cli/flags/flag-errors.ts, applied in src/cli/main.ts).
 */
import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { inFlagTerms } from "../../../src/cli/flags/flag-errors.js";
import { resolveNetworkOptions } from "../../../src/egress/network-options.js";
import { InvalidArgumentError, NotFoundError } from "../../../src/errors.js";
import { resolveLimits } from "../../../src/sandbox/limits.js";
import { resolveSandboxOptions } from "../../../src/sandbox/options.js";

async function caught(p: Promise<unknown> | (() => unknown)): Promise<unknown> {
  try {
    await (typeof p === "function" ? p() : p);
  } catch (err) {
    return err;
  }
  throw new Error("expected a throw");
}

const missing = join(import.meta.dirname, "no-such-dir");

describe("inFlagTerms", () => {
  it("words a library error about an option field with the flag that sets it", async () => {
    const memory = inFlagTerms(await caught(() => resolveLimits({ memoryBytes: 1024 })));
    expect(memory).toBeInstanceOf(InvalidArgumentError);
    expect((memory as Error).message).toBe("--memory must be at least 6 MiB (Docker's minimum), got 1024.");
    expect((inFlagTerms(await caught(() => resolveLimits({ tmpBytes: 0 }))) as Error).message).toBe(
      "--tmp-size must be a positive number, got 0; omit it for the default 67108864.",
    );
    const workspace = inFlagTerms(
      await caught(resolveSandboxOptions({ workspace: { hostPath: missing, mode: "copy" } }, "s1")),
    );
    expect(workspace).toBeInstanceOf(NotFoundError);
    expect((workspace as Error).message).toBe(
      `--workspace ${missing} does not exist; pass an existing host directory.`,
    );
    expect((inFlagTerms(await caught(resolveSandboxOptions({ tenant: "a b" }, "s1"))) as Error).message).toBe(
      '--tenant must match ^[A-Za-z0-9][A-Za-z0-9_.:@-]{0,127}$ (letters, digits and _.:@- after a letter or digit, at most 128), got "a b".',
    );
    const network = (ca: string | undefined, egress?: string[]) =>
      caught(
        resolveNetworkOptions({
          mode: "allowlist",
          rules: [{ host: "a.org", ports: [443], decision: "allow" }],
          ...(ca ? { caBundlePath: ca } : {}),
          ...(egress ? { egressNetworks: egress } : {}),
        }),
      );
    expect((inFlagTerms(await network(missing)) as Error).message).toBe(
      `--net-ca-bundle ${missing} is not a file; pass a PEM file of CA certificates.`,
    );
    expect((inFlagTerms(await network(undefined, ["bridge", "a b"])) as Error).message).toBe(
      '--egress-network must be an engine network name, got "a b".',
    );
  });

  it("leaves an error without a field, or whose field no flag sets, as it is", () => {
    const plain = new InvalidArgumentError("--tools names no tool.");
    expect(inFlagTerms(plain)).toBe(plain);
    const unmapped = new InvalidArgumentError({ field: "ttlMs", problem: "must be positive." });
    expect(inFlagTerms(unmapped)).toBe(unmapped);
    const other = new Error("x");
    expect(inFlagTerms(other)).toBe(other);
  });
});

describe("warden's own error line", () => {
  const argv = process.argv;
  afterEach(() => {
    process.argv = argv;
    vi.restoreAllMocks();
  });

  it("prints the flag: `warden exec ls {} --memory 1k`", async () => {
    // Validation comes before any engine call; an engine address that answers nothing makes sure.
    vi.stubEnv("DOCKER_HOST", `unix://${join(import.meta.dirname, "no-engine.sock")}`);
    const err: string[] = [];
    vi.spyOn(console, "error").mockImplementation((line: unknown) => err.push(String(line)) > 0);
    const exit = vi.spyOn(process, "exit").mockImplementation((() => undefined) as never);
    process.argv = ["node", "warden", "exec", "ls", "{}", "--memory", "1k"];
    await import("../../../src/cli/main.js");
    expect(err).toEqual([
      "warden: INVALID_ARGUMENT: --memory must be at least 6 MiB (Docker's minimum), got 1024.",
    ]);
    expect(exit).toHaveBeenCalledWith(2);
    vi.unstubAllEnvs();
  });
});

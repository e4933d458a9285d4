/** refuseBeyondCapabilities: a spec asking for more than a backend has is refused, naming the field. */
import { describe, expect, it } from "vitest";
import { InvalidArgumentError } from "../../../src/errors.js";
import type { BackendCapabilities } from "../../../src/sandbox/backend.js";
import { refuseBeyondCapabilities } from "../../../src/sandbox/capabilities.js";
import type { SandboxSpec } from "../../../src/sandbox/types.js";

const COPY_ONLY: BackendCapabilities = {
  workspaceModes: ["copy"],
  mounts: false,
  networkModes: ["none"],
  runtimes: ["runc"],
  execPaths: ["channel"],
  warmPool: false,
};

describe("refuseBeyondCapabilities", () => {
  it("names the field, what the backend offers and what was asked", () => {
    let thrown: unknown;
    try {
      refuseBeyondCapabilities("memory", COPY_ONLY, { workspace: { hostPath: "/tmp", mode: "ro" } });
    } catch (err) {
      thrown = err;
    }
    expect(thrown).toBeInstanceOf(InvalidArgumentError);
    expect(thrown).toMatchObject({
      code: "INVALID_ARGUMENT",
      field: "workspace.mode",
      problem:
        'the memory backend offers "copy", got "ro"; ask for one of those or use a backend that has it.',
    });
  });

  it("refuses mounts, an allowlist network, another runtime or exec path; passes what is offered", () => {
    const fields = (
      [
        { mounts: [{ hostPath: "/tmp", containerPath: "/extra" }] },
        { network: { mode: "allowlist", rules: [] } },
        { runtime: "runsc" },
        { execPath: "docker-exec" },
      ] satisfies SandboxSpec[]
    ).map((spec) => {
      try {
        refuseBeyondCapabilities("memory", COPY_ONLY, spec);
        return "passed";
      } catch (err) {
        return (err as InvalidArgumentError).field;
      }
    });
    expect(fields).toEqual(["mounts", "network.mode", "runtime", "execPath"]);
    expect(() =>
      refuseBeyondCapabilities("memory", COPY_ONLY, {
        workspace: { hostPath: "/tmp" },
        mounts: [],
        network: { mode: "none" },
        runtime: "runc",
        execPath: "channel",
      }),
    ).not.toThrow();
  });
});

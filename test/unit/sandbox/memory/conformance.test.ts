/** The backend conformance suite (test/helpers/backend-conformance.ts) on the memory backend. */
import { describe } from "vitest";
import { openSandboxBackend } from "../../../../src/sandbox/backends.js";
import { backendConformance } from "../../../helpers/backend-conformance.js";

describe("memory backend conformance", () => {
  backendConformance({
    open: (options) => openSandboxBackend({ kind: "memory" }, options),
    capabilities: {
      workspaceModes: ["copy"],
      mounts: false,
      networkModes: ["none"],
      runtimes: ["runc"],
      execPaths: ["channel"],
    },
    runtime: "runc",
  });
});

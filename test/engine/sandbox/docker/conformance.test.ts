/** The backend conformance suite (test/helpers/backend-conformance.ts) on the Docker engine. */
import { openSandboxBackend } from "../../../../src/sandbox/backends.js";
import { TEST_IMAGE } from "../../../helpers/backend.js";
import { backendConformance } from "../../../helpers/backend-conformance.js";
import { describeEngine } from "../../../helpers/engine.js";

describeEngine("docker backend conformance", () => {
  backendConformance({
    open: (options) => openSandboxBackend({ kind: "docker" }, options),
    capabilities: {
      workspaceModes: ["ro", "copy", "rw"],
      mounts: true,
      networkModes: ["none", "allowlist"],
      runtimes: ["runc", "runsc"],
      execPaths: ["channel", "docker-exec"],
    },
    runtime: "runc",
    ...(TEST_IMAGE ? { spec: { image: TEST_IMAGE } } : {}),
  });
});

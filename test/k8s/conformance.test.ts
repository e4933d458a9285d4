/**
 * The backend conformance suite (test/helpers/backend-conformance.ts) on the test cluster, through
 * openSandboxBackend: on the node's default runtime, and under RuntimeClass gvisor when
 * $WARDEN_TEST_RUNTIME_CLASS says so (`npm run test:k8s:gvisor`). Each backend it opens takes its
 * own replica id (one replica Lease per live backend).
 */
import { randomUUID } from "node:crypto";
import { hostname } from "node:os";
import { openSandboxBackend } from "../../src/sandbox/backends.js";
import { TEST_IMAGE } from "../helpers/backend.js";
import { backendConformance } from "../helpers/backend-conformance.js";
import { describeK8s, TEST_KUBECONFIG, TEST_NAMESPACE, TEST_RUNTIME_CLASS } from "../helpers/k8s.js";

describeK8s(`kubernetes backend conformance (RuntimeClass ${TEST_RUNTIME_CLASS ?? "none"})`, () => {
  backendConformance({
    open: (options) =>
      openSandboxBackend(
        {
          kind: "kubernetes",
          namespace: TEST_NAMESPACE,
          kubeconfig: TEST_KUBECONFIG,
          imagePullPolicy: "Never",
          startTimeoutMs: 90_000,
          replicaId: `test-conf-${randomUUID().slice(0, 8)}`,
          leaseHolder: `${hostname()}:${process.pid}`,
          ...(TEST_RUNTIME_CLASS ? { runtimeClassName: TEST_RUNTIME_CLASS } : {}),
        },
        options,
      ),
    capabilities: {
      workspaceModes: ["copy"],
      mounts: false,
      networkModes: ["none"],
      // runsc means the backend's RuntimeClass, offered only when the backend has one.
      runtimes: TEST_RUNTIME_CLASS ? ["runc", "runsc"] : ["runc"],
      execPaths: ["channel"],
    },
    runtime: TEST_RUNTIME_CLASS ?? "default",
    ...(TEST_IMAGE ? { spec: { image: TEST_IMAGE } } : {}),
  });
});

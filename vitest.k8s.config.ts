import { defineConfig } from "vitest/config";

// `npm run test:k8s`: the Kubernetes backend against a real cluster (scripts/ensure-k8s.sh), kept
// out of `npm test`. Locally a missing cluster skips it with a visible message; under CI=true it
// fails. One file at a time: the node is this machine's, shared with the Docker suites.
export default defineConfig({
  test: {
    name: "k8s",
    // test/k8s: what only Kubernetes has; then the engine suites written for both backends
    // (test/helpers/backend.ts), on Pods this time: tools, sessions, the server and its tenants.
    include: [
      "test/k8s/**/*.test.ts",
      "test/engine/tools/*.test.ts",
      "test/engine/process/*.test.ts",
      "test/engine/sandbox/own-uid.test.ts",
      "test/engine/sandbox/sealed-helper.test.ts",
      "test/engine/pipeline/session.test.ts",
      "test/engine/session/*.test.ts",
      "test/engine/server/api.test.ts",
      "test/engine/server/crash.test.ts",
      "test/engine/server/processes-restart.test.ts",
      "test/engine/server/process-attach.test.ts",
      "test/engine/server/http/routes/files-routes.test.ts",
      "test/engine/server/tenancy/spill-quota.test.ts",
      "test/engine/policy/ordinary-live.test.ts",
    ],
    env: { WARDEN_TEST_BACKEND: "kubernetes" },
    globalSetup: ["test/k8s/global-setup.ts"],
    testTimeout: 180_000,
    hookTimeout: 240_000,
    fileParallelism: false,
  },
});

/** The server's policy hooks: each tenant's policy file, with `ask` answered over HTTP within approvalTimeoutMs. */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, expect, it } from "vitest";
import { ApprovalBroker } from "../../../../src/server/sessions/approval-broker.js";
import { createPolicyHookFactory } from "../../../../src/server/sessions/policy-hooks.js";
import type { AnyTool } from "../../../../src/tools/types.js";
import { FakeSandbox } from "../../../helpers/fake-sandbox.js";
import { tenant, testConfig } from "../../../helpers/server-fakes.js";

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "warden-hooks-"));
  await writeFile(join(dir, "ask.yaml"), "default: ask\nrules: []\n");
});
afterEach(() => rm(dir, { recursive: true, force: true }));

it("approvalTimeoutMs from the config bounds how long an unanswered ask waits", async () => {
  const alpha = tenant("alpha", { policy: [join(dir, "ask.yaml")] });
  const config = { ...testConfig(join(dir, "state"), [alpha]), approvalTimeoutMs: 50 };
  const factory = await createPolicyHookFactory(config);
  const approvals = new ApprovalBroker();
  const { beforeToolCall } = await factory({
    tenant: alpha,
    sessionId: "s1",
    approvals,
  });
  const result = await beforeToolCall![0]!({
    call: { id: "c1", name: "bash", arguments: { command: "touch x" } },
    tool: { name: "bash" } as AnyTool,
    args: { command: "touch x" },
    sandbox: new FakeSandbox(),
    sessionId: "s1",
  });
  expect(result).toMatchObject({ block: true });
  expect((result as { reason: string }).reason).toContain("no answer came in time");
  // Bounded by the configured 50 ms: the 5 min default would outlast the test's timeout.
});

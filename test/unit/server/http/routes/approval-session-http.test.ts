/**
 * "allow-session" answered over HTTP (POST /v1/approvals/:id) covers exactly the approved command
 * for the rest of that session (issue 11, item 8), through the server's real approval routes and
 * its policy hook factory.
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, expect, it } from "vitest";
import { createMemoryAuditLog } from "../../../../../src/server/audit.js";
import { type RunningServer, startServer } from "../../../../../src/server/server.js";
import { createPolicyHookFactory } from "../../../../../src/server/sessions/policy-hooks.js";
import type { AnyTool } from "../../../../../src/tools/types.js";
import { FakeSandbox } from "../../../../helpers/fake-sandbox.js";
import { auth, serverParts, tenant, testConfig } from "../../../../helpers/server-fakes.js";

let dir: string;
let server: RunningServer;
const alpha = () => tenant("alpha", { policy: [join(dir, "ask.yaml")] });

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "warden-session-approval-"));
  await writeFile(join(dir, "ask.yaml"), "default: ask\nrules: []\n");
  server = await startServer({
    config: testConfig(join(dir, "state"), [alpha()]),
    ...serverParts(),
    audit: createMemoryAuditLog(),
    listen: false,
  });
});
afterEach(async () => {
  await server.shutdown(0);
  await rm(dir, { recursive: true, force: true });
});

/** The pending ask of tenant alpha for `call`, once listed; throws when the call finished without asking. */
async function pendingAsk(call: Promise<unknown>): Promise<{ id: string; part?: string }> {
  let settled = false;
  void call.finally(() => {
    settled = true;
  });
  for (;;) {
    const res = await server.app.inject({ method: "GET", url: "/v1/approvals", headers: auth("alpha") });
    const [ask] = res.json().approvals;
    if (ask) return ask;
    if (settled) throw new Error("the call was decided without asking");
    await new Promise((r) => setTimeout(r, 5));
  }
}

async function answer(id: string, decision: string): Promise<void> {
  const res = await server.app.inject({
    method: "POST",
    url: `/v1/approvals/${id}`,
    headers: auth("alpha"),
    payload: { decision },
  });
  expect(res.statusCode).toBe(200);
}

it("allow-session over HTTP: other code in the same variable asks again, the identical command does not", async () => {
  const factory = await createPolicyHookFactory(testConfig(join(dir, "state"), [alpha()]));
  const { beforeToolCall } = await factory({
    tenant: alpha(),
    sessionId: "s1",
    approvals: server.ctx.approvals,
  });
  const hook = beforeToolCall![0]!;
  const run = (command: string) =>
    hook({
      call: { id: "c1", name: "bash", arguments: { command } },
      tool: { name: "bash" } as AnyTool,
      args: { command },
      sandbox: new FakeSandbox(),
      sessionId: "s1",
    });

  const approved = `CODE='print(1)'; python3 -c "$CODE"`;
  const first = run(approved);
  await answer((await pendingAsk(first)).id, "allow-session");
  expect(await first).toBeUndefined();

  const other = run(`CODE='import os'; python3 -c "$CODE"`);
  const ask = await pendingAsk(other);
  expect(ask.part).toBe('python3 -c "$CODE"');
  await answer(ask.id, "deny");
  expect(await other).toMatchObject({ block: true });

  expect(await run(approved)).toBeUndefined();
  expect(server.ctx.approvals.list("alpha")).toEqual([]);
});

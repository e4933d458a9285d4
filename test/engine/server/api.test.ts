/**
 * `warden serve` in-process on the backend under test (Docker, or Pods under `npm run test:k8s`;
 * test/helpers/backend.ts): two tenants side by side with streaming, cross-tenant 404s on every
 * route, an `ask` answered over HTTP, and shutdown that leaves no container or Pod behind
 * (sessions closed, the warm pool of `warden serve`'s backend drained).
 */
import { randomBytes } from "node:crypto";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { gitBlobId, NULL_OID } from "../../../src/review/index.js";
import { resolveServerConfig } from "../../../src/server/config/index.js";
import type { RunningServer } from "../../../src/server/server.js";
import { hashKey } from "../../../src/server/tenancy/auth.js";
import {
  backendLeftovers,
  describeBackend,
  removeBackendTenant,
  testServeBackend,
} from "../../helpers/backend.js";
import { startTestServer, testQuotas } from "../../helpers/server-fixture.js";

const suffix = randomBytes(4).toString("hex");
const A = `test-srv-a-${suffix}`;
const B = `test-srv-b-${suffix}`;
const KEYS = { [A]: `key-a-${suffix}`, [B]: `key-b-${suffix}` };
const quotas = testQuotas(2);

function parseSse(body: string): { event: string; data: Record<string, unknown> }[] {
  return body
    .split("\n\n")
    .filter(Boolean)
    .map((block) => ({
      event: /^event: (.*)$/m.exec(block)?.[1] ?? "",
      data: JSON.parse(/^data: (.*)$/m.exec(block)?.[1] ?? "null"),
    }));
}

describeBackend("warden serve: two tenants", () => {
  let dir: string;
  let server: RunningServer;

  const call = (tenant: string, path: string, init: RequestInit = {}) =>
    fetch(`${server.url}${path}`, {
      ...init,
      headers: {
        authorization: `Bearer ${KEYS[tenant]}`,
        "content-type": "application/json",
        ...init.headers,
      },
    });

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "warden-srv-engine-"));
    await writeFile(
      join(dir, "ask-bash.yaml"),
      [
        "name: ask-bash",
        "default: allow",
        "rules:",
        "  - id: ask-touch",
        "    decision: ask",
        "    tools: [bash]",
        '    commands: ["touch"]',
        "    reason: creating files needs approval",
      ].join("\n"),
    );
    const config = resolveServerConfig(
      {
        port: 0,
        stateDir: "state",
        ...testServeBackend(),
        tenants: [
          { id: A, keys: [{ id: "a", sha256: hashKey(KEYS[A]!) }], quotas, policy: ["ask-bash.yaml"] },
          { id: B, keys: [{ id: "b", sha256: hashKey(KEYS[B]!) }], quotas },
        ],
      },
      dir,
    );
    server = await startTestServer(config);
  });

  afterAll(async () => {
    await server?.shutdown(0);
    for (const t of [A, B]) {
      const left = await backendLeftovers(t);
      await removeBackendTenant(t);
      expect(left).toEqual([]);
    }
    await rm(dir, { recursive: true, force: true });
  });

  it("runs streamed batches for two tenants at once and keeps them apart", async () => {
    const [sa, sb] = await Promise.all(
      [A, B].map(
        async (t) =>
          (await (await call(t, "/v1/sessions", { method: "POST", body: "{}" })).json()) as { id: string },
      ),
    );
    const stream = (t: string, id: string, text: string) =>
      call(t, `/v1/sessions/${id}/tool-calls`, {
        method: "POST",
        headers: { accept: "text/event-stream" },
        body: JSON.stringify({
          toolCalls: [
            { id: "w", name: "write", arguments: { path: "who.txt", content: `${text}\n` } },
            { id: "b", name: "bash", arguments: { command: `echo ${text}; echo done` } },
          ],
        }),
      }).then(async (r) => ({
        status: r.status,
        type: r.headers.get("content-type"),
        events: parseSse(await r.text()),
      }));
    const [ra, rb] = await Promise.all([stream(A, sa!.id, "alpha"), stream(B, sb!.id, "beta")]);
    for (const [r, text] of [
      [ra, "alpha"],
      [rb, "beta"],
    ] as const) {
      expect(r.status).toBe(200);
      expect(r.type).toBe("text/event-stream; charset=utf-8");
      expect(
        r.events.filter((e) => e.event === "tool_execution_start").map((e) => e.data.toolCallId),
      ).toEqual(["w", "b"]);
      expect(r.events.filter((e) => e.event === "tool_execution_end")).toHaveLength(2);
      const last = r.events.at(-1)!;
      expect(last.event).toBe("results");
      const results = last.data.results as {
        toolCallId: string;
        isError: boolean;
        content: { text: string }[];
      }[];
      expect(results.map((x) => [x.toolCallId, x.isError])).toEqual([
        ["w", false],
        ["b", false],
      ]);
      expect(results[1]!.content[0]!.text).toBe(`${text}\ndone\n`);
    }
    // Each tenant sees only its own file, and only its own session.
    const patchA = await (await call(A, `/v1/sessions/${sa!.id}/changes`)).text();
    expect(patchA).toBe(
      `diff --git a/who.txt b/who.txt\nnew file mode 100644\nindex ${NULL_OID}..${gitBlobId(Buffer.from("alpha\n"))}\n` +
        "--- /dev/null\n+++ b/who.txt\n@@ -0,0 +1,1 @@\n+alpha\n",
    );
    const listB = (await (await call(B, "/v1/sessions")).json()) as { sessions: { id: string }[] };
    expect(listB.sessions.map((s) => s.id)).toEqual([sb!.id]);
    for (const [method, path, body] of [
      ["GET", `/v1/sessions/${sa!.id}`, undefined],
      ["GET", `/v1/sessions/${sa!.id}/workspace`, undefined],
      ["GET", `/v1/sessions/${sa!.id}/changes`, undefined],
      ["GET", `/v1/tools?session=${sa!.id}`, undefined],
      [
        "POST",
        `/v1/sessions/${sa!.id}/tool-calls`,
        JSON.stringify({ toolCalls: [{ id: "x", name: "ls", arguments: {} }] }),
      ],
      ["DELETE", `/v1/sessions/${sa!.id}`, undefined],
    ] as const) {
      const r = await call(B, path, { method, ...(body ? { body } : {}) });
      expect([method, path, r.status]).toEqual([method, path, 404]);
      expect(((await r.json()) as { code: string }).code).toBe("NOT_FOUND");
    }
    const tar = await call(A, `/v1/sessions/${sa!.id}/workspace`);
    expect(tar.headers.get("content-type")).toBe("application/x-tar");
    expect(Buffer.from(await tar.arrayBuffer()).includes(Buffer.from("who.txt"))).toBe(true);
    for (const [t, s] of [
      [A, sa!.id],
      [B, sb!.id],
    ] as const) {
      expect((await call(t, `/v1/sessions/${s}`, { method: "DELETE" })).status).toBe(204);
    }
  });

  it("an ask waits for its own tenant's answer over HTTP; the other tenant cannot see or answer it", async () => {
    const s = (await (await call(A, "/v1/sessions", { method: "POST", body: "{}" })).json()) as {
      id: string;
    };
    const pending = call(A, `/v1/sessions/${s.id}/tool-calls`, {
      method: "POST",
      body: JSON.stringify({
        toolCalls: [{ id: "t", name: "bash", arguments: { command: "touch made.txt" } }],
      }),
    });
    let approvals: { id: string; rule: string; tool: string }[] = [];
    await expect
      .poll(
        async () => {
          approvals = ((await (await call(A, "/v1/approvals")).json()) as { approvals: typeof approvals })
            .approvals;
          return approvals.length;
        },
        { timeout: 20_000, interval: 200 },
      )
      .toBe(1);
    expect(approvals[0]).toMatchObject({ tool: "bash", rule: "ask-touch" });
    expect(((await (await call(B, "/v1/approvals")).json()) as { approvals: unknown[] }).approvals).toEqual(
      [],
    );
    const foreign = await call(B, `/v1/approvals/${approvals[0]!.id}`, {
      method: "POST",
      body: '{"decision":"allow"}',
    });
    expect(foreign.status).toBe(404);
    const ok = await call(A, `/v1/approvals/${approvals[0]!.id}`, {
      method: "POST",
      body: '{"decision":"allow"}',
    });
    expect(ok.status).toBe(200);
    const res = (await (await pending).json()) as { results: { isError: boolean }[] };
    expect(res.results[0]!.isError).toBe(false);
    const ls = await call(A, `/v1/sessions/${s.id}/tool-calls`, {
      method: "POST",
      body: JSON.stringify({ toolCalls: [{ id: "l", name: "ls", arguments: {} }] }),
    });
    expect(
      ((await ls.json()) as { results: { content: { text: string }[] }[] }).results[0]!.content[0]!.text,
    ).toBe("made.txt");
  });

  it("over SSE an ask is announced as approval_requested, and answered from it", async () => {
    const s = (await (await call(A, "/v1/sessions", { method: "POST", body: "{}" })).json()) as {
      id: string;
    };
    const res = await call(A, `/v1/sessions/${s.id}/tool-calls`, {
      method: "POST",
      headers: { accept: "text/event-stream" },
      body: JSON.stringify({
        toolCalls: [{ id: "t2", name: "bash", arguments: { command: "touch streamed.txt" } }],
      }),
    });
    const reader = res.body!.getReader();
    let text = "";
    while (!text.includes("event: approval_requested")) {
      const { value, done } = await reader.read();
      if (done) throw new Error(`stream ended before the ask was announced:\n${text}`);
      text += Buffer.from(value).toString();
    }
    const asked = parseSse(text).find((e) => e.event === "approval_requested")!.data;
    expect(asked).toMatchObject({ sessionId: s.id, toolCallId: "t2", tool: "bash", rule: "ask-touch" });
    const ok = await call(A, `/v1/approvals/${asked.id}`, { method: "POST", body: '{"decision":"allow"}' });
    expect(ok.status).toBe(200);
    for (let r = await reader.read(); !r.done; r = await reader.read())
      text += Buffer.from(r.value).toString();
    const events = parseSse(text);
    expect(events.map((e) => e.event)).toEqual([
      "tool_execution_start",
      "approval_requested",
      "tool_execution_end",
      "results",
    ]);
    expect((events.at(-1)!.data.results as { isError: boolean }[])[0]!.isError).toBe(false);
  });
});

/**
 * The tamper-evident audit trail end to end (issue 39): a real `warden serve` (bin/warden.js, so
 * `npm run build` first) runs one tool call whose policy asks, answered over HTTP; the session is
 * closed and the server stopped; `warden audit verify` with the public key the server printed says
 * intact and signed to the last record, the call's approval and tool lines share its toolCallId
 * and batch, and one edited line makes verify exit 1 naming it (a missing file: exit 2). A server
 * restarted on the same state (its session adopted) continues every stream's chain, both runs signed
 * by the operator's auditSigningKey.
 */
import { execFile } from "node:child_process";
import { generateKeyPairSync } from "node:crypto";
import { mkdir, mkdtemp, readFile, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { promisify } from "node:util";
import { afterAll, expect, it } from "vitest";
import { auditKeyId } from "../../../src/audit/index.js";
import { describeEngine } from "../../helpers/engine.js";
import { cleanUpServe, type ServeChild, spawnServe, writeServeConfig } from "../../helpers/server-fixture.js";

const WARDEN = resolve(import.meta.dirname, "../../../bin/warden.js");
const tenant = `test-audit-trail-${process.pid}`;
const KEY = "audit-trail-key";

/** `warden audit …args`: its exit code and stdout. */
async function audit(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await promisify(execFile)(process.execPath, [WARDEN, "audit", ...args]);
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

describeEngine("warden serve: the audit trail", () => {
  let dir: string | undefined;
  let serve: ServeChild | undefined;
  afterAll(async () => cleanUpServe(serve ? [serve] : [], tenant, dir, undefined));

  it("one asked call answered over HTTP: verify says intact and signed; its lines share its toolCallId", async () => {
    dir = await mkdtemp(join(tmpdir(), "warden-audit-trail-"));
    await writeFile(
      join(dir, "ask.yaml"),
      "default: allow\nrules:\n  - { id: ask-write, decision: ask, tools: [write] }\n",
    );
    const config = await writeServeConfig(dir, tenant, KEY, { tenant: { policy: [join(dir, "ask.yaml")] } });
    serve = await spawnServe(WARDEN, config, ["--on-exit", "close"]);
    const api = (path: string, init: RequestInit = {}) =>
      fetch(`${serve!.url}${path}`, {
        ...init,
        headers: { authorization: `Bearer ${KEY}`, "content-type": "application/json", ...init.headers },
      });
    const created = await api("/v1/sessions", { method: "POST", body: "{}" });
    expect(created.status).toBe(201);
    const { id } = (await created.json()) as { id: string };
    const call = api(`/v1/sessions/${id}/tool-calls`, {
      method: "POST",
      body: JSON.stringify({
        toolCalls: [{ id: "w1", name: "write", arguments: { path: "/workspace/a.txt", content: "hi\n" } }],
      }),
    });
    let ask: { id: string; toolCallId: string } | undefined;
    while (!ask) {
      const listed = (await (await api("/v1/approvals")).json()) as {
        approvals: { id: string; toolCallId: string }[];
      };
      ask = listed.approvals[0];
      if (!ask) await new Promise((r) => setTimeout(r, 50));
    }
    expect(ask.toolCallId).toBe("w1");
    const answered = await api(`/v1/approvals/${ask.id}`, {
      method: "POST",
      body: JSON.stringify({ decision: "allow" }),
    });
    expect(answered.status).toBe(200);
    const result = (await (await call).json()) as { results: { isError: boolean }[] };
    expect(result.results[0]!.isError).toBe(false);
    expect((await api(`/v1/sessions/${id}`, { method: "DELETE" })).status).toBe(204);
    serve.child.kill("SIGTERM");
    expect(await serve.exited).toBe(0);

    // The public half of the key the server made, as it printed it on stderr.
    const printed =
      /audit checkpoints are signed with key ([0-9a-f]{16}),[^\n]*\n(-----BEGIN PUBLIC KEY-----\n[^-]+-----END PUBLIC KEY-----\n)/.exec(
        serve.stderr(),
      );
    expect(printed).not.toBeNull();
    const [, keyId, pem] = printed!;
    await writeFile(join(dir, "audit.pub"), pem!);
    const log = join(dir, "state", "audit.jsonl");
    const verified = await audit("verify", log, "--public-key", join(dir, "audit.pub"));
    expect(verified.code).toBe(0);
    const out = verified.stdout.trimEnd().split("\n");
    expect(out[0]).toMatch(/^intact: \d+ record\(s\) in 3 stream\(s\), \d+ checkpoint\(s\)$/);
    expect(out.slice(1)).toEqual([
      `signed by key ${keyId} (the key given with --public-key)`,
      "signed to their last record: 3 stream(s)",
    ]);

    const lines = (await readFile(log, "utf8")).trimEnd().split("\n");
    const records = lines.map((l) => JSON.parse(l) as Record<string, unknown>);
    const approval = records.find((r) => r.kind === "approval");
    const tool = records.find((r) => r.kind === "tool");
    expect(approval).toMatchObject({
      tenant,
      session: id,
      toolCallId: "w1",
      batch: tool?.batch,
      tool: "write",
      answer: "allow-once",
      who: "k",
    });
    expect(tool).toMatchObject({ toolCallId: "w1", decision: "allow", decider: "user", tool: "write" });
    // The session's stream (its request lines are in the tenant's only) ends with its closed line
    // and the checkpoint that signs it.
    const ofSession = records
      .filter((r) => r.session === id && r.kind !== "request")
      .map((r) => [r.kind, r.event ?? r.stream]);
    expect(ofSession.slice(-2)).toEqual([
      ["session", "closed"],
      ["checkpoint", `session:${id}`],
    ]);

    // One edited line: exit 1 naming it; no such file: exit 2.
    const at = records.indexOf(approval!);
    const edited = lines.map((l, i) =>
      i === at ? l.replace('"answer":"allow-once"', '"answer":"deny"') : l,
    );
    await writeFile(join(dir, "edited.jsonl"), `${edited.join("\n")}\n`);
    const tampered = await audit("verify", join(dir, "edited.jsonl"));
    expect(tampered.code).toBe(1);
    expect(tampered.stdout).toMatch(
      new RegExp(`^tampered: line ${at + 1} \\(tenant:${tenant} seq \\d+\\): edited: `),
    );
    const missing = await audit("verify", join(dir, "nope.jsonl"));
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain(`Cannot read the audit log ${join(dir, "nope.jsonl")} (ENOENT)`);
  }, 120_000);

  it("a restarted server continues each stream's chain; the operator's key (auditSigningKey) signs both runs", async () => {
    dir ??= await mkdtemp(join(tmpdir(), "warden-audit-trail-"));
    const run = join(dir, "restart");
    const { privateKey, publicKey } = generateKeyPairSync("ed25519");
    await mkdir(run);
    await writeFile(join(run, "key.pem"), privateKey.export({ type: "pkcs8", format: "pem" }));
    await writeFile(join(run, "key.pub"), publicKey.export({ type: "spki", format: "pem" }));
    const config = await writeServeConfig(run, tenant, KEY, { server: { auditSigningKey: "key.pem" } });
    const bash = (url: string, id: string, callId: string) =>
      fetch(`${url}/v1/sessions/${id}/tool-calls`, {
        method: "POST",
        headers: { authorization: `Bearer ${KEY}`, "content-type": "application/json" },
        body: JSON.stringify({
          toolCalls: [{ id: callId, name: "bash", arguments: { command: "echo hi" } }],
        }),
      });
    // The first run keeps its session (the default onExit) for the second to adopt.
    serve = await spawnServe(WARDEN, config);
    const created = await fetch(`${serve.url}/v1/sessions`, {
      method: "POST",
      headers: { authorization: `Bearer ${KEY}`, "content-type": "application/json" },
      body: "{}",
    });
    const { id } = (await created.json()) as { id: string };
    expect((await bash(serve.url, id, "before")).status).toBe(200);
    serve.child.kill("SIGTERM");
    expect(await serve.exited).toBe(0);
    expect(serve.stderr()).not.toContain("audit checkpoints are signed with key");
    serve = await spawnServe(WARDEN, config, ["--on-exit", "close"]);
    expect((await bash(serve.url, id, "after")).status).toBe(200);
    serve.child.kill("SIGTERM");
    expect(await serve.exited).toBe(0);

    const log = join(run, "state", "audit.jsonl");
    const verified = await audit("verify", log, "--public-key", join(run, "key.pub"));
    expect(verified.code).toBe(0);
    expect(verified.stdout.trimEnd().split("\n").slice(1)).toEqual([
      `signed by key ${auditKeyId(publicKey)} (the key given with --public-key)`,
      "signed to their last record: 3 stream(s)",
    ]);
    const records = (await readFile(log, "utf8"))
      .trimEnd()
      .split("\n")
      .map(
        (l) =>
          JSON.parse(l) as {
            kind: string;
            toolCallId?: string;
            event?: string;
            chain: { stream: string; seq: number }[];
          },
      );
    const sessionSeq = (r: (typeof records)[number] | undefined) =>
      r?.chain.find((l) => l.stream === `session:${id}`)?.seq;
    const before = records.find((r) => r.toolCallId === "before");
    const adopted = records.find((r) => r.kind === "session" && r.event === "adopted");
    // The second run's first line of the session follows the first run's last (its shutdown checkpoint).
    expect(sessionSeq(adopted)).toBe((sessionSeq(before) ?? -9) + 2);
    expect(
      records.filter((r) => r.kind === "audit-key").map((r) => (r as { source?: string }).source),
    ).toEqual(["config", "config"]);
  }, 120_000);
});

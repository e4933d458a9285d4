/**
 * Issue 11, an attack: the server's memory was bounded per request only (400 held-open 8 MiB
 * `PUT /files` bodies: 3.43 GB; 150 unread 8 MiB GETs: 1.36 GB; unauthenticated 1 MiB bodies to
 * unknown routes). Now the bytes held at once are bounded per tenant (quotas.maxBufferedBytes) and
 * for the server (maxBufferedBytes), a request must arrive within httpRequestTimeoutMs, and bodies
 * without an API key are refused unread. Real HTTP on a real listener over the fake backend.
 */
import { afterEach, describe, expect, it } from "vitest";
import { resolveServerConfig } from "../../../../src/server/config/index.js";
import { BufferedBytes } from "../../../../src/server/http/buffered-bytes.js";
import { bufferedServer, MiB } from "../../../helpers/buffered-server.js";
import { auth, tenant } from "../../../helpers/server-fakes.js";

describe("BufferedBytes", () => {
  const alpha = tenant("alpha", { quotas: { ...tenant("alpha").quotas, maxBufferedBytes: 100 } });
  const beta = tenant("beta", { quotas: { ...tenant("beta").quotas, maxBufferedBytes: 100 } });

  it("holds up to the tenant's quota, then refuses with 429 naming it; a release gives the bytes back once", () => {
    const buffered = new BufferedBytes(1000);
    const first = buffered.hold(alpha);
    first.growTo(60);
    first.growTo(40); // never shrinks
    expect(first.bytes).toBe(60);
    const second = buffered.hold(alpha);
    expect(() => second.growTo(41)).toThrow(
      "Tenant 'alpha' holds 60 bytes of request bodies and file reads in the server's memory; 41 more would pass its quotas.maxBufferedBytes (100); retry once its other requests finish, or raise quotas.maxBufferedBytes in the server config.",
    );
    expect(second.bytes).toBe(0);
    second.growTo(40);
    expect([buffered.held("alpha"), buffered.held()]).toEqual([100, 100]);
    first.release();
    first.release();
    expect([buffered.held("alpha"), buffered.held()]).toEqual([40, 40]);
    second.release();
    expect([buffered.held("alpha"), buffered.held()]).toEqual([0, 0]);
  });

  it("refuses past the server's bound with NO_ROOM, whichever tenant holds the bytes", () => {
    const buffered = new BufferedBytes(150);
    buffered.hold(alpha).growTo(100);
    let refused: unknown;
    try {
      buffered.hold(beta).growTo(51);
    } catch (err) {
      refused = err;
    }
    expect(refused).toMatchObject({
      code: "NO_ROOM",
      retryAfterSeconds: 1,
      message:
        "The server holds 100 bytes of request bodies and file reads in memory; 51 more would pass its maxBufferedBytes (150); room frees as those requests finish.",
    });
    expect(buffered.held("beta")).toBe(0);
  });
});

describe("config: maxBufferedBytes and httpRequestTimeoutMs", () => {
  const quotas = { maxSessions: 1, cpus: 1, memoryBytes: 64 * MiB, workspaceBytes: 1000 };
  const tenants = (extra: Record<string, unknown> = {}) => [
    { id: "acme", keys: [{ id: "k", sha256: "a".repeat(64) }], quotas: { ...quotas, ...extra } },
  ];

  it("a bound below the largest buffered body is refused, naming both fields", () => {
    expect(() =>
      resolveServerConfig({ tenants: tenants({ maxBufferedBytes: 4 * MiB }) }, "/", "c.yaml"),
    ).toThrow(
      "c.yaml: /tenants/0/quotas/maxBufferedBytes 4194304 is below filesMaxBytes 8388608, so the largest such body could never be held; raise /tenants/0/quotas/maxBufferedBytes to at least 8388608 or lower filesMaxBytes.",
    );
    expect(() =>
      resolveServerConfig(
        { filesMaxBytes: 1024, maxBufferedBytes: 2 * MiB, jsonBodyLimitBytes: 3 * MiB, tenants: tenants() },
        "/",
        "c.yaml",
      ),
    ).toThrow(
      "c.yaml: maxBufferedBytes 2097152 is below jsonBodyLimitBytes 3145728, so the largest such body could never be held; raise maxBufferedBytes to at least 3145728 or lower jsonBodyLimitBytes.",
    );
  });

  it("an HTTP request timeout of 0 is refused naming the field", () => {
    expect(() => resolveServerConfig({ httpRequestTimeoutMs: 0, tenants: tenants() }, "/", "c.yaml")).toThrow(
      "c.yaml: invalid server configuration: /httpRequestTimeoutMs must be >= 1.",
    );
  });
});

/** A refusal for held bytes: its status, Retry-After 1, Connection: close and its exact body. */
async function expectRefusal(res: Response, status: number, body: { code: string; message: string }) {
  expect([res.status, res.headers.get("retry-after"), res.headers.get("connection")]).toEqual([
    status,
    "1",
    "close",
  ]);
  expect(await res.json()).toEqual(body);
}

describe("warden serve: bodies held at once", () => {
  const s = bufferedServer();
  afterEach(() => s.stop());

  it("held-open file bodies count against their tenant until their connection ends; other tenants are not counted", async () => {
    await s.serve(2 * MiB);
    const a = await s.create("alpha");
    const b = await s.create("beta");
    const held = [0, 1].map(() => s.raw(s.putHead(a, "alpha", MiB), "partial"));
    await expect.poll(() => s.gauge()).toContain('{tenant="alpha"} 2097152');
    await expectRefusal(await s.put(a, "alpha", 1000), 429, {
      code: "RATE_LIMITED",
      message:
        "Tenant 'alpha' holds 2097152 bytes of request bodies and file reads in the server's memory; 1000 more would pass its quotas.maxBufferedBytes (2097152); retry once its other requests finish, or raise quotas.maxBufferedBytes in the server config.",
    });
    expect((await s.put(b, "beta", MiB)).status).toBe(200);

    held[0]?.socket.destroy();
    await expect.poll(async () => (await s.put(a, "alpha", 1000)).status).toBe(200);
  });

  it("the count follows the route, not the client's content type: an upper-case type is counted at filesMaxBytes, an x-tar body refused unread", async () => {
    await s.serve(4 * MiB);
    const a = await s.create("alpha");
    s.raw(s.putHead(a, "alpha", MiB, "Application/Octet-Stream"), "partial");
    await expect.poll(() => s.gauge()).toContain('{tenant="alpha"} 1048576');
    const tar = s.raw(s.putHead(a, "alpha", MiB, "application/x-tar"), "partial");
    await expect.poll(() => tar.received()).toMatch(/^HTTP\/1\.1 400 Bad Request\r\n/);
    expect(tar.received()).toContain("Send the file's bytes with content-type application/octet-stream.");
    expect(await s.gauge()).toContain('{tenant="alpha"} 1048576');
  });

  it("a chunked body is counted as it arrives (no declared length to take first), in warden_buffered_bytes", async () => {
    await s.serve(MiB + 256 * 1024);
    const a = await s.create("alpha");
    const head = s.putHead(a, "alpha", 0).replace("content-length: 0", "transfer-encoding: chunked");
    const chunk = Buffer.alloc(768 * 1024, 120);
    const chunked = s.raw(head, `${chunk.length.toString(16)}\r\n${chunk.toString("latin1")}\r\n`);
    await expect.poll(() => s.gauge()).toContain('{tenant="alpha"} 786432');
    expect((await s.put(a, "alpha", 768 * 1024)).status).toBe(429);
    chunked.socket.write("0\r\n\r\n");
    await expect.poll(() => chunked.received()).toContain("HTTP/1.1 200 OK");
    expect((await s.put(a, "alpha", 768 * 1024)).status).toBe(200);
  });

  it("a chunked body that passes the quota midway is refused then (files and JSON), and the connection closed", async () => {
    await s.serve(MiB + 32 * 1024);
    const a = await s.create("alpha");
    s.raw(s.putHead(a, "alpha", MiB), "partial");
    await expect.poll(() => s.gauge()).toContain('{tenant="alpha"} 1048576');
    const chunkedHead = (line: string, type: string) =>
      [
        line,
        "host: x",
        `authorization: ${auth("alpha").authorization}`,
        `content-type: ${type}`,
        "transfer-encoding: chunked",
      ].join("\r\n");
    const chunkOf = (text: string) => `${Buffer.byteLength(text).toString(16)}\r\n${text}\r\n`;
    const file = s.raw(
      chunkedHead(`PUT /v1/sessions/${a}/files?path=g.bin HTTP/1.1`, "application/octet-stream"),
      chunkOf("x".repeat(48 * 1024)),
    );
    const json = s.raw(
      chunkedHead(`POST /v1/sessions/${a}/tool-calls HTTP/1.1`, "application/json"),
      chunkOf(`{"calls":[{"id":"1","name":"echo","arguments":{"text":"${"y".repeat(48 * 1024)}`),
    );
    await Promise.all([file.closed, json.closed]);
    for (const refused of [file.received(), json.received()]) {
      expect(refused).toMatch(/^HTTP\/1\.1 429 Too Many Requests\r\n/);
      expect(refused).toMatch(/\r\nconnection: close\r\n/i);
      expect(refused).toContain("would pass its quotas.maxBufferedBytes (1081344)");
    }
    await expect.poll(() => s.gauge()).toContain('{tenant="alpha"} 1048576');
  });

  it("the server's bound covers all tenants: NO_ROOM (503) once it is reached", async () => {
    await s.serve(2 * MiB, (c) => {
      c.maxBufferedBytes = MiB;
    });
    const a = await s.create("alpha");
    const b = await s.create("beta");
    s.raw(s.putHead(a, "alpha", MiB), "partial");
    await expect.poll(() => s.gauge()).toContain('{tenant="alpha"} 1048576');
    await expectRefusal(await s.put(b, "beta", 10), 503, {
      code: "NO_ROOM",
      message:
        "The server holds 1048576 bytes of request bodies and file reads in memory; 10 more would pass its maxBufferedBytes (1048576); room frees as those requests finish. Retry in 1 s (Retry-After).",
    });
  });

  it("a body without an API key is refused before it is read: 404 on an unknown route, 400 on a route that takes none", async () => {
    await s.serve(MiB);
    // Only part of each declared body is sent: the answer comes without waiting for the rest.
    const unknown = s.raw("POST /nope HTTP/1.1\r\nhost: x\r\ncontent-length: 1048576", "partial");
    const healthz = s.raw("GET /healthz HTTP/1.1\r\nhost: x\r\ncontent-length: 1048576", "partial");
    await Promise.all([unknown.closed, healthz.closed]);
    expect(unknown.received()).toMatch(/^HTTP\/1\.1 404 Not Found\r\n/);
    expect(unknown.received()).toMatch(/\r\nconnection: close\r\n/i);
    expect(unknown.received()).toContain('{"code":"NOT_FOUND","message":"No route POST /nope."}');
    expect(healthz.received()).toMatch(/^HTTP\/1\.1 400 Bad Request\r\n/);
    expect(healthz.received()).toContain(
      '{"code":"INVALID_ARGUMENT","message":"GET /healthz takes no request body; send it without one."}',
    );
  });

  it("a route path the router decodes is authenticated like the plain one (/%761/sessions is /v1/sessions)", async () => {
    await s.serve(MiB);
    const res = await fetch(`${s.url()}/%761/sessions`, {
      method: "POST",
      headers: { ...auth("alpha"), "content-type": "application/json" },
      body: "{}",
    });
    expect(res.status).toBe(201);
    expect((await fetch(`${s.url()}/%761/sessions`, { method: "POST", body: "{}" })).status).toBe(401);
  });
});

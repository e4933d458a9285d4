/**
 * Issue 11, an attack: the server's memory was bounded per request only (400 held-open 8 MiB
 * `PUT /files` bodies: 3.43 GB; 150 unread 8 MiB GETs: 1.36 GB; unauthenticated 1 MiB bodies to
 * unknown routes). Now the bytes held at once are bounded per tenant (quotas.maxBufferedBytes) and
 * for the server (maxBufferedBytes), a request must arrive within requestTimeoutMs, and bodies
 * without an API key are refused unread. Real HTTP on a real listener over the fake backend.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { connect, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { BufferedBytes } from "../../../src/server/buffered-bytes.js";
import { resolveServerConfig, type ServerConfig } from "../../../src/server/config.js";
import { type RunningServer, startServer } from "../../../src/server/server.js";
import { auth, FakeBackend, type TOKENS, tenant, testConfig } from "../../helpers/server-fakes.js";

const MiB = 1024 * 1024;

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
        "The server holds 100 bytes of request bodies and file reads in memory; 51 more would pass its maxBufferedBytes (150).",
    });
    expect(buffered.held("beta")).toBe(0);
  });
});

describe("config: maxBufferedBytes and requestTimeoutMs", () => {
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

  it("a request timeout of 0 is refused naming the field", () => {
    expect(() => resolveServerConfig({ requestTimeoutMs: 0, tenants: tenants() }, "/", "c.yaml")).toThrow(
      "c.yaml: invalid server configuration: /requestTimeoutMs must be >= 1.",
    );
  });
});

/** A raw HTTP/1.1 client: writes `head` (and `body`), collects whatever comes back until closed. */
function rawRequest(url: string, head: string, body = "") {
  const { hostname, port } = new URL(url);
  const socket: Socket = connect(Number(port), hostname);
  let received = "";
  socket.on("data", (d) => (received += d.toString("latin1")));
  socket.on("error", () => {});
  const closed = new Promise<void>((resolve) => socket.once("close", () => resolve()));
  socket.write(`${head}\r\n\r\n${body}`);
  return { socket, closed, received: () => received };
}

describe("warden serve: bytes held at once", () => {
  let dir: string;
  let server: RunningServer | undefined;
  let backend: FakeBackend;
  const sockets: Socket[] = [];

  async function serve(edit: (config: ServerConfig) => void): Promise<string> {
    dir = await mkdtemp(join(tmpdir(), "warden-buffered-"));
    backend = new FakeBackend();
    const config = testConfig(dir);
    edit(config);
    server = await startServer({ config, backend, listen: true });
    return server.url as string;
  }
  const quota = (config: ServerConfig, maxBufferedBytes: number) => {
    for (const t of config.tenants) t.quotas = { ...t.quotas, maxBufferedBytes };
  };

  afterEach(async () => {
    for (const s of sockets.splice(0)) s.destroy();
    await server?.shutdown(0);
    server = undefined;
    await rm(dir, { recursive: true, force: true });
  });

  const create = async (url: string, who: keyof typeof TOKENS): Promise<string> => {
    const res = await fetch(`${url}/v1/sessions`, {
      method: "POST",
      headers: { ...auth(who), "content-type": "application/json" },
      body: "{}",
    });
    return ((await res.json()) as { id: string }).id;
  };
  const putHead = (id: string, who: keyof typeof TOKENS, length: number) =>
    [
      `PUT /v1/sessions/${id}/files?path=f.bin HTTP/1.1`,
      "host: x",
      `authorization: ${auth(who).authorization}`,
      "content-type: application/octet-stream",
      `content-length: ${length}`,
    ].join("\r\n");
  const bufferedGauge = async (url: string) =>
    ((await (await fetch(`${url}/metrics`)).text()).match(/^warden_buffered_bytes\{.*$/gm) ?? []).join("\n");
  const put = (url: string, id: string, who: keyof typeof TOKENS, bytes: number) =>
    fetch(`${url}/v1/sessions/${id}/files?path=f.bin`, {
      method: "PUT",
      headers: { ...auth(who), "content-type": "application/octet-stream" },
      body: Buffer.alloc(bytes, 120),
    });

  it("held-open file bodies count against their tenant until their connection ends; other tenants are not counted", async () => {
    const url = await serve((c) => quota(c, 2 * MiB));
    const a = await create(url, "alpha");
    const b = await create(url, "beta");
    const held = [0, 1].map(() => rawRequest(url, putHead(a, "alpha", MiB), "partial"));
    sockets.push(...held.map((h) => h.socket));
    await expect.poll(() => bufferedGauge(url), { timeout: 5000 }).toContain('{tenant="alpha"} 2097152');
    const refused = await put(url, a, "alpha", 1000);
    expect(refused.status).toBe(429);
    expect(refused.headers.get("retry-after")).toBe("1");
    expect(refused.headers.get("connection")).toBe("close");
    expect(await refused.json()).toEqual({
      code: "RATE_LIMITED",
      message:
        "Tenant 'alpha' holds 2097152 bytes of request bodies and file reads in the server's memory; 1000 more would pass its quotas.maxBufferedBytes (2097152); retry once its other requests finish, or raise quotas.maxBufferedBytes in the server config.",
    });
    expect((await put(url, b, "beta", MiB)).status).toBe(200);

    held[0]?.socket.destroy();
    await expect.poll(async () => (await put(url, a, "alpha", 1000)).status, { timeout: 5000 }).toBe(200);
  });

  it("a chunked body is counted as it arrives (no declared length to take first), in warden_buffered_bytes", async () => {
    const url = await serve((c) => quota(c, MiB + 256 * 1024));
    const a = await create(url, "alpha");
    const head = putHead(a, "alpha", 0).replace("content-length: 0", "transfer-encoding: chunked");
    const chunk = Buffer.alloc(768 * 1024, 120);
    const chunked = rawRequest(url, head, `${chunk.length.toString(16)}\r\n${chunk.toString("latin1")}\r\n`);
    sockets.push(chunked.socket);
    await expect.poll(() => bufferedGauge(url), { timeout: 5000 }).toContain('{tenant="alpha"} 786432');
    expect((await put(url, a, "alpha", 768 * 1024)).status).toBe(429);
    chunked.socket.write("0\r\n\r\n");
    await expect.poll(() => chunked.received(), { timeout: 5000 }).toContain("HTTP/1.1 200 OK");
    expect((await put(url, a, "alpha", 768 * 1024)).status).toBe(200);
  });

  it("a chunked body that passes the quota midway is refused then (files and JSON), and the connection closed", async () => {
    const url = await serve((c) => quota(c, MiB + 32 * 1024));
    const a = await create(url, "alpha");
    const held = rawRequest(url, putHead(a, "alpha", MiB), "partial");
    sockets.push(held.socket);
    await expect.poll(() => bufferedGauge(url), { timeout: 5000 }).toContain('{tenant="alpha"} 1048576');
    const chunkedHead = (line: string, type: string) =>
      [
        line,
        "host: x",
        `authorization: ${auth("alpha").authorization}`,
        `content-type: ${type}`,
        "transfer-encoding: chunked",
      ].join("\r\n");
    const chunkOf = (text: string) => `${Buffer.byteLength(text).toString(16)}\r\n${text}\r\n`;
    const file = rawRequest(
      url,
      chunkedHead(`PUT /v1/sessions/${a}/files?path=g.bin HTTP/1.1`, "application/octet-stream"),
      chunkOf("x".repeat(48 * 1024)),
    );
    const json = rawRequest(
      url,
      chunkedHead(`POST /v1/sessions/${a}/tool-calls HTTP/1.1`, "application/json"),
      chunkOf(`{"calls":[{"id":"1","name":"echo","arguments":{"text":"${"y".repeat(48 * 1024)}`),
    );
    sockets.push(file.socket, json.socket);
    await Promise.all([file.closed, json.closed]);
    for (const refused of [file.received(), json.received()]) {
      expect(refused).toMatch(/^HTTP\/1\.1 429 Too Many Requests\r\n/);
      expect(refused).toMatch(/\r\nconnection: close\r\n/i);
      expect(refused).toContain("would pass its quotas.maxBufferedBytes (1081344)");
    }
    await expect.poll(() => bufferedGauge(url)).toContain('{tenant="alpha"} 1048576');
  });

  it("the server's bound covers all tenants: NO_ROOM (503) once it is reached", async () => {
    const url = await serve((c) => {
      quota(c, 2 * MiB);
      c.maxBufferedBytes = MiB;
    });
    const a = await create(url, "alpha");
    const b = await create(url, "beta");
    const held = rawRequest(url, putHead(a, "alpha", MiB), "partial");
    sockets.push(held.socket);
    await expect.poll(() => bufferedGauge(url), { timeout: 5000 }).toContain('{tenant="alpha"} 1048576');
    const refused = await put(url, b, "beta", 10);
    expect(refused.status).toBe(503);
    expect(refused.headers.get("retry-after")).toBe("1");
    expect(await refused.json()).toEqual({
      code: "NO_ROOM",
      message:
        "The server holds 1048576 bytes of request bodies and file reads in memory; 10 more would pass its maxBufferedBytes (1048576). Retry in 1 s (Retry-After).",
    });
  });

  it("an unread file GET holds its bytes until its connection ends", async () => {
    const url = await serve((c) => {
      c.filesMaxBytes = 32 * MiB;
      quota(c, 40 * MiB);
    });
    const a = await create(url, "alpha");
    expect((await put(url, a, "alpha", 32 * MiB)).status).toBe(200);
    const get = [
      `GET /v1/sessions/${a}/files?path=f.bin HTTP/1.1`,
      "host: x",
      `authorization: ${auth("alpha").authorization}`,
    ].join("\r\n");
    // Read only the first bytes (the server has taken its hold by then), then never again: the
    // kernel's socket buffers take a few MiB, the server keeps the rest.
    const unread = rawRequest(url, get);
    unread.socket.once("data", () => unread.socket.pause());
    sockets.push(unread.socket);
    await expect.poll(() => unread.received()).toMatch(/^HTTP\/1\.1 200 OK\r\n/);
    const second = () =>
      fetch(`${url}/v1/sessions/${a}/files?path=f.bin`, { headers: auth("alpha") }).then(async (r) => ({
        status: r.status,
        text: await r.text(),
      }));
    await expect.poll(async () => (await second()).status, { timeout: 5000 }).toBe(429);
    expect((await second()).text).toContain("holds 33554432 bytes");
    unread.socket.destroy();
    await expect.poll(async () => (await second()).status, { timeout: 5000 }).toBe(200);
  });

  it("a request not sent within requestTimeoutMs gets 408, and its bytes are released", async () => {
    const url = await serve((c) => {
      quota(c, MiB);
      c.requestTimeoutMs = 400;
    });
    const a = await create(url, "alpha");
    const slow = rawRequest(url, putHead(a, "alpha", MiB), "partial");
    sockets.push(slow.socket);
    await slow.closed;
    expect(slow.received()).toMatch(/^HTTP\/1\.1 408 Request Timeout\r\n/);
    expect((await put(url, a, "alpha", MiB)).status).toBe(200);
  });

  it("a body without an API key is refused unread: 404 on an unknown route, 400 on a route that takes none", async () => {
    const url = await serve(() => {});
    const post = (path: string) => fetch(`${url}${path}`, { method: "POST", body: "x".repeat(MiB) });
    const unknown = await post("/nope");
    expect([unknown.status, await unknown.json()]).toEqual([
      404,
      { code: "NOT_FOUND", message: "No route POST /nope." },
    ]);
    // fetch sends no GET body; a raw request does.
    const raw = rawRequest(url, "GET /healthz HTTP/1.1\r\nhost: x\r\ncontent-length: 5", "hello");
    await raw.closed;
    expect(raw.received()).toMatch(/^HTTP\/1\.1 400 Bad Request\r\n/);
    expect(raw.received()).toContain(
      '{"code":"INVALID_ARGUMENT","message":"GET /healthz takes no request body; send it without one."}',
    );
  });
});

/**
 * The listener's connections (src/server/http/connections.ts). Before: nothing bounded the sockets a
 * client opened (3,000 with unfinished headers grew a server by 72 MiB), and shutdown waited for a
 * connection still sending an unread answer until httpRequestTimeoutMs, not shutdownGraceMs.
 * Real sockets on a real listener over the fake backend; 127.0.0.2 and .3 are other clients.
 */
import type { Socket } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { resolveServerConfig } from "../../../../src/server/config/index.js";
import { clientOf } from "../../../../src/server/http/connections.js";
import { bufferedServer, MiB, type RawRequest } from "../../../helpers/buffered-server.js";
import type { FakeBackend } from "../../../helpers/server-fakes.js";

/** The exact 503 a connection over `field` gets. */
function refusal(message: string): string {
  const json = JSON.stringify({ code: "NO_ROOM", message });
  return (
    "HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\n" +
    `Content-Length: ${json.length}\r\nRetry-After: 1\r\nConnection: close\r\n\r\n${json}`
  );
}

const perClientRefusal = refusal(
  "This address has maxConnectionsPerClient (3) connections open to the server; close one or retry later, or raise maxConnectionsPerClient in the server config.",
);

describe("warden serve: connection caps", () => {
  const s = bufferedServer();
  afterEach(() => s.stop());

  const gauge = async () => (await s.running().ctx.metrics.connections.get()).values[0]?.value;
  const refused = async () =>
    (await s.running().ctx.metrics.connectionsRefused.get()).values.map((v) => [v.labels.cap, v.value]);
  /** Opens `n` connections from `from` and waits until the server counts `total` open. */
  const openCounted = async (n: number, from: string, total: number): Promise<RawRequest[]> => {
    const opened = Array.from({ length: n }, () => s.open(from));
    await expect.poll(gauge).toBe(total);
    return opened;
  };
  const healthz = "GET /healthz HTTP/1.1\r\nhost: x\r\n\r\n";

  it("past maxConnectionsPerClient an address's connection gets the 503 and is closed; others are not held back; a freed place is taken again", async () => {
    await s.serve(MiB, (c) => {
      c.maxConnectionsPerClient = 3;
    });
    const three = await openCounted(3, "127.0.0.1", 3);

    const fourth = s.open("127.0.0.1");
    await fourth.closed;
    expect(fourth.received()).toBe(perClientRefusal);
    // Sent with its request, the 503 comes back the same and the request is never served.
    const withRequest = s.open("127.0.0.1");
    withRequest.socket.write(healthz);
    await withRequest.closed;
    expect(withRequest.received()).toBe(perClientRefusal);
    expect(await refused()).toEqual([["maxConnectionsPerClient", 2]]);
    expect(await gauge()).toBe(3);

    const other = (await openCounted(1, "127.0.0.2", 4))[0] as RawRequest;
    other.socket.write(healthz);
    await expect.poll(other.received).toMatch(/^HTTP\/1\.1 200 OK\r\n/);

    three[0]?.socket.destroy();
    await expect.poll(gauge).toBe(3);
    const again = (await openCounted(1, "127.0.0.1", 4))[0] as RawRequest;
    again.socket.write(healthz);
    await expect.poll(again.received).toMatch(/^HTTP\/1\.1 200 OK\r\n/);

    // Ended every way a socket ends: closed by the client, reset, or by the server (a bad request).
    three[1]?.socket.end();
    three[2]?.socket.resetAndDestroy();
    again.socket.write("BAD\r\n\r\n");
    other.socket.destroy();
    await expect.poll(gauge).toBe(0);
    expect(await refused()).toEqual([["maxConnectionsPerClient", 2]]);
  });

  it("past maxConnections a connection from any address gets the 503 naming it", async () => {
    await s.serve(MiB, (c) => {
      c.maxConnections = 2;
      c.maxConnectionsPerClient = 2;
    });
    await openCounted(1, "127.0.0.1", 1);
    await openCounted(1, "127.0.0.2", 2);
    const third = s.open("127.0.0.3");
    await third.closed;
    expect(third.received()).toBe(
      refusal(
        "The server has maxConnections (2) connections open; retry later, or raise maxConnections in the server config.",
      ),
    );
    expect(await refused()).toEqual([["maxConnections", 1]]);
  });
});

describe("warden serve: shutdown and open connections", () => {
  const s = bufferedServer();
  afterEach(() => s.stop());

  /**
   * Past the test's timeout (60 s), ms. No wait here has a budget of its own: a shutdown that waited
   * for an httpRequestTimeoutMs or a grace this long would time the test out.
   */
  const PAST_THE_TEST = 600_000;
  const shutdown = (): Promise<void> => s.running().shutdown();
  const gaugeOfConnections = async () => (await s.running().ctx.metrics.connections.get()).values[0]?.value;
  /** A batch of alpha's sleeping `ms`, sent raw and running once this resolves. */
  const sleepingBatch = async (ms: number) => {
    const a = await s.create("alpha");
    const body = JSON.stringify({ toolCalls: [{ id: "s", name: "sleep", arguments: { ms } }] });
    const call = s.raw(s.callsHead(a, "alpha", body.length), body);
    await expect.poll(() => s.running().ctx.registry.runningBatches()).toBe(1);
    return call;
  };
  /**
   * A batch of alpha's that runs until `release()` (then sleeps 1 ms and answers "slept"): it ends
   * when the test says, not when a sleep that a loaded host could outlast is over.
   */
  const heldBatch = async () => {
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    const a = await s.create("alpha");
    const session = s.backend().sessions.at(-1) as FakeBackend["sessions"][number];
    const run = session.runToolCalls.bind(session);
    session.runToolCalls = async (calls, options) => {
      await released;
      return run(calls, options);
    };
    const body = JSON.stringify({ toolCalls: [{ id: "s", name: "sleep", arguments: { ms: 1 } }] });
    const call = s.raw(s.callsHead(a, "alpha", body.length), body);
    await expect.poll(() => s.running().ctx.registry.runningBatches()).toBe(1);
    return { call, release };
  };
  /** Counts the server's idle-connection checks from now on (the listener's close, shutdown's drain polls). */
  const countIdleChecks = (): (() => number) => {
    const server = s.running().app.server;
    const check = server.closeIdleConnections.bind(server);
    let checks = 0;
    server.closeIdleConnections = () => {
      checks++;
      check();
    };
    return () => checks;
  };
  const bufferedOf = async (tenant: string) =>
    (await s.running().ctx.metrics.bufferedBytes.get()).values.find((v) => v.labels.tenant === tenant)?.value;

  /** A 32 MiB file in a new session of alpha and a GET of it that the client does not read yet. */
  async function pausedGet(): Promise<RawRequest> {
    const a = await s.create("alpha");
    expect((await s.put(a, "alpha", 32 * MiB)).status).toBe(200);
    const get = s.raw(s.getHead(a, "alpha"));
    get.socket.pause();
    // The answer is being sent: the file read is held until it is over.
    await expect.poll(() => bufferedOf("alpha")).toBe(32 * MiB);
    return get;
  }
  const fileServer = (graceMs: number) =>
    s.serve(64 * MiB, (c) => {
      c.filesMaxBytes = 32 * MiB;
      c.shutdownGraceMs = graceMs;
      c.httpRequestTimeoutMs = PAST_THE_TEST;
    });

  it("an SSE answer no one reads is closed once shutdownGraceMs is over, not after httpRequestTimeoutMs", async () => {
    await s.serve(64 * MiB, (c) => {
      c.jsonBodyLimitBytes = 16 * MiB;
      c.shutdownGraceMs = 200;
      c.httpRequestTimeoutMs = PAST_THE_TEST;
    });
    const a = await s.create("alpha");
    const body = JSON.stringify({
      toolCalls: [{ id: "big", name: "echo", arguments: { text: "x".repeat(12 * MiB) } }],
    });
    const unread = s.raw(`${s.callsHead(a, "alpha", body.length)}\r\naccept: text/event-stream`, body);
    unread.socket.once("data", () => unread.socket.pause());
    await expect.poll(() => unread.received()).toMatch(/^HTTP\/1\.1 200 OK\r\n/);

    await shutdown();
    await expect.poll(gaugeOfConnections).toBe(0);
    unread.socket.resume();
    await unread.closed;
    expect(unread.received()).not.toContain("event: results");
  });

  it("a file answer no one reads is closed once shutdownGraceMs is over", async () => {
    await fileServer(200);
    const unread = await pausedGet();
    await shutdown();
    await expect.poll(gaugeOfConnections).toBe(0);
    unread.socket.resume();
    await unread.closed;
    expect(unread.received().length).toBeLessThan(32 * MiB);
  });

  it("an answer being sent when shutdown starts is not cut: read within the grace, it arrives whole", async () => {
    await fileServer(PAST_THE_TEST);
    const slow = await pausedGet();
    const idleChecks = countIdleChecks();
    const stopped = shutdown();
    // Shutdown has begun and checked for idle connections several times (the listener's close and
    // its drain polls), each of which could have cut the answer: then the server has no connection
    // left, and the length below tells.
    await expect.poll(async () => idleChecks() >= 6 || (await gaugeOfConnections()) === 0).toBe(true);
    slow.socket.resume();
    await slow.closed;
    await stopped;
    const [head, ...rest] = slow.received().split("\r\n\r\n");
    expect(head).toMatch(/^HTTP\/1\.1 200 OK\r\n/);
    expect(rest.join("\r\n\r\n").length).toBe(32 * MiB);
  });

  it("a call still running past the grace is aborted and its answer delivered before the connection is closed", async () => {
    await s.serve(MiB, (c) => {
      c.shutdownGraceMs = 200;
    });
    const call = await sleepingBatch(PAST_THE_TEST);
    await shutdown();
    await call.closed;
    expect(call.received()).toMatch(/^HTTP\/1\.1 200 OK\r\n[\s\S]*"text":"Operation aborted"/);
  });

  it("idle kept-alive connections are closed when draining starts, and one whose answer ends during the grace then", async () => {
    await s.serve(MiB, (c) => {
      c.shutdownGraceMs = PAST_THE_TEST;
    });
    const idle = s.raw("GET /healthz HTTP/1.1\r\nhost: x");
    await expect.poll(idle.received).toMatch(/^HTTP\/1\.1 200 OK\r\n/);
    const { call, release } = await heldBatch();

    const stopped = shutdown();
    await idle.closed;
    expect(s.running().ctx.registry.runningBatches()).toBe(1);
    release();
    await stopped;
    await call.closed;
    expect(call.received()).toMatch(/^HTTP\/1\.1 200 OK\r\n[\s\S]*"text":"slept"/);
  });

  it("a connection whose request headers are still arriving when shutdown starts is answered 503 with Connection: close, not cut", async () => {
    await s.serve(MiB, (c) => {
      c.shutdownGraceMs = PAST_THE_TEST;
    });
    const { release } = await heldBatch();
    const accepted = new Promise<Socket>((resolve) => s.running().app.server.once("connection", resolve));
    const half = s.open();
    const halfHead = "GET /healthz HTTP/1.1\r\nhost: x\r\n";
    await new Promise((r) => half.socket.write(halfHead, r));
    // The server has read the half-sent head (its parser reads the socket as the bytes come).
    const served = await accepted;
    await expect.poll(() => served.bytesRead).toBe(halfHead.length);

    const idleChecks = countIdleChecks();
    const stopped = shutdown();
    // Shutdown's start (the listener is closed) and six idle checks, none of which cut the connection.
    await expect.poll(() => s.running().app.server.listening).toBe(false);
    await expect.poll(idleChecks).toBeGreaterThanOrEqual(6);
    half.socket.write("\r\n");
    await half.closed;
    // Fastify's answer to a request that arrives while it closes, as before the idle check was replaced.
    const json = '{"error":"Service Unavailable","message":"Service Unavailable","statusCode":503}';
    expect(half.received().replace(/\r\nDate: [^\r]*/, "")).toBe(
      "HTTP/1.1 503 Service Unavailable\r\nConnection: close\r\nContent-Type: application/json\r\n" +
        `Content-Length: ${json.length}\r\n\r\n${json}`,
    );
    expect(s.running().ctx.registry.runningBatches()).toBe(1);
    release();
    await stopped;
  });
});

describe("config: maxConnections and maxConnectionsPerClient", () => {
  const tenants = [
    {
      id: "acme",
      keys: [{ id: "k", sha256: "a".repeat(64) }],
      quotas: { maxSessions: 1, cpus: 1, memoryBytes: 64 * MiB, workspaceBytes: 1000 },
    },
  ];

  it("defaults to 4096 and 256", () => {
    expect(resolveServerConfig({ tenants }, "/")).toMatchObject({
      maxConnections: 4096,
      maxConnectionsPerClient: 256,
    });
  });

  it("without maxConnectionsPerClient, a maxConnections below 256 is the client's cap too", () => {
    expect(resolveServerConfig({ maxConnections: 100, tenants }, "/")).toMatchObject({
      maxConnections: 100,
      maxConnectionsPerClient: 100,
    });
    expect(resolveServerConfig({ maxConnections: 300, tenants }, "/")).toMatchObject({
      maxConnections: 300,
      maxConnectionsPerClient: 256,
    });
  });

  it("refuses 0, and a client's cap above the server's, naming the fields", () => {
    expect(() => resolveServerConfig({ maxConnections: 0, tenants }, "/", "c.yaml")).toThrow(
      "c.yaml: invalid server configuration: /maxConnections must be >= 1.",
    );
    expect(() => resolveServerConfig({ maxConnectionsPerClient: 0, tenants }, "/", "c.yaml")).toThrow(
      "c.yaml: invalid server configuration: /maxConnectionsPerClient must be >= 1.",
    );
    expect(() =>
      resolveServerConfig({ maxConnections: 100, maxConnectionsPerClient: 101, tenants }, "/", "c.yaml"),
    ).toThrow(
      "c.yaml: maxConnectionsPerClient 101 is above maxConnections 100, so it could never be reached; lower maxConnectionsPerClient to at most 100 or raise maxConnections.",
    );
  });
});

describe("clientOf: what maxConnectionsPerClient counts", () => {
  it("an IPv4 address, an IPv4-mapped IPv6 one as IPv4, and an IPv6 address by its /64", () => {
    expect(clientOf("127.0.0.2")).toBe("127.0.0.2");
    expect(clientOf("::ffff:10.1.2.3")).toBe("10.1.2.3");
    expect(clientOf("::FFFF:10.1.2.3")).toBe("10.1.2.3");
    expect(clientOf("fd00:1::1")).toBe("fd00:1:0:0::/64");
    expect(clientOf("fd00:1:0:0:ffff:ffff:ffff:fffe")).toBe("fd00:1:0:0::/64");
    expect(clientOf("FD00:0001:0000:0000::2")).toBe("fd00:1:0:0::/64");
    expect(clientOf("fd00:1:0:1::1")).toBe("fd00:1:0:1::/64");
    expect(clientOf("fe80::1%eth0")).toBe("fe80:0:0:0::/64");
    expect(clientOf("::1")).toBe("0:0:0:0::/64");
    expect(clientOf("64:ff9b::1.2.3.4")).toBe("64:ff9b:0:0::/64");
    expect(clientOf(undefined)).toBe("");
  });
});

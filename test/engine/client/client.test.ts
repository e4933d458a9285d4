/** The TypeScript client (`warden/client`) against a real `warden serve` child process. */
import { afterAll, beforeAll, expect, it } from "vitest";
import {
  InvalidArgumentError,
  NotFoundError,
  RateLimitedError,
  type ToolCallEvent,
  UnauthorizedError,
  WardenClient,
} from "../../../src/client/index.js";
import { describeEngine } from "../../helpers/engine.js";
import { type ServedTenants, serveTenants } from "../../helpers/serve-tenants.js";

const text = (r: { content: { type: string; text?: string }[] }) =>
  r.content.map((c) => c.text ?? "").join("");

describeEngine("warden/client against warden serve", () => {
  let served: ServedTenants;
  let client: WardenClient;
  beforeAll(async () => {
    served = await serveTenants(`test-clientts-${process.pid}`);
    client = new WardenClient({ baseUrl: served.url, apiKey: served.keys.main });
  });
  afterAll(async () => {
    await served?.stop();
  });

  it("creates, lists, gets and deletes a session; lists its tools", async () => {
    const session = await client.createSession({ tools: { tools: ["read", "bash", "write"] } });
    expect(session.enabledTools).toEqual(["read", "bash", "write"]);
    expect((await client.listSessions()).map((s) => s.id)).toContain(session.id);
    expect((await client.getSession(session.id)).id).toBe(session.id);
    expect((await client.tools(session.id)).map((t) => t.function.name)).toEqual(["read", "bash", "write"]);
    await client.deleteSession(session.id);
    await expect(client.getSession(session.id)).rejects.toBeInstanceOf(NotFoundError);
  });

  it("streams a bash call as an async iterator: start, updates, end, then results", async () => {
    const session = await client.createSession();
    const events: ToolCallEvent[] = [];
    for await (const event of client.streamToolCalls(session.id, [
      { id: "c1", name: "bash", arguments: { command: "for i in 1 2 3; do echo l$i; sleep 0.4; done" } },
    ])) {
      events.push(event);
    }
    const types = events.map((e) => e.type);
    expect(types[0]).toBe("tool_execution_start");
    expect(types).toContain("tool_execution_update");
    expect(types.at(-2)).toBe("tool_execution_end");
    const last = events.at(-1);
    expect(last?.type === "results" && text(last.results[0]!)).toBe("l1\nl2\nl3\n");
    await client.deleteSession(session.id);
  });

  it("writes a file, then downloads the workspace tar and the patch", async () => {
    const session = await client.createSession();
    const [written] = await client.runToolCalls(session.id, [
      { id: "w", name: "write", arguments: { path: "hello.txt", content: "hello client\n" } },
    ]);
    expect(written?.isError).toBe(false);
    const patch = await client.changes(session.id);
    expect(patch).toContain("+hello client");
    const tar = Buffer.from(await client.downloadWorkspace(session.id));
    expect(tar.includes("hello client\n")).toBe(true);
    expect(await client.writeFile(session.id, "put/b.txt", "put by the client\n")).toEqual({
      path: "/workspace/put/b.txt",
      bytes: 18,
    });
    expect(new TextDecoder().decode(await client.readFile(session.id, "put/b.txt"))).toBe(
      "put by the client\n",
    );
    await expect(client.readFile(session.id, "nope.txt")).rejects.toBeInstanceOf(NotFoundError);
    await client.deleteSession(session.id);
  });

  it("answers an approval announced on the stream", async () => {
    const asking = new WardenClient({ baseUrl: served.url, apiKey: served.keys.policy });
    const session = await asking.createSession();
    let last: ToolCallEvent | undefined;
    for await (const event of asking.streamToolCalls(session.id, [
      { id: "a", name: "bash", arguments: { command: "sleep 0; echo approved" } },
    ])) {
      if (event.type === "approval_requested") {
        expect(event.approval.toolCallId).toBe("a");
        expect((await asking.listApprovals()).map((a) => a.id)).toEqual([event.approval.id]);
        await asking.answerApproval(event.approval.id, "allow-once");
      }
      last = event;
    }
    expect(last?.type === "results" && text(last.results[0]!)).toBe("approved\n");
    await asking.deleteSession(session.id);
  });

  it("errors are classes carrying the server's code, status and message", async () => {
    const err = await client.getSession("no-such-session").catch((e: unknown) => e);
    expect(err).toBeInstanceOf(NotFoundError);
    expect(err).toMatchObject({ code: "NOT_FOUND", status: 404 });
    const bad = await client.createSession({ limits: { cpus: 64 } }).catch((e: unknown) => e);
    expect(bad).toBeInstanceOf(InvalidArgumentError);
    expect(bad).toMatchObject({ code: "INVALID_ARGUMENT", status: 400 });
    expect((bad as Error).message).toContain("cpus");
    const stranger = new WardenClient({ baseUrl: served.url, apiKey: "not-a-key" });
    await expect(stranger.listSessions()).rejects.toBeInstanceOf(UnauthorizedError);
  });

  it("a 429 carries Retry-After; with retries the call waits for it and succeeds once a slot frees", async () => {
    const statuses: number[] = [];
    const counting: typeof fetch = async (input, init) => {
      const response = await fetch(input, init);
      statuses.push(response.status);
      return response;
    };
    const noRetry = new WardenClient({ baseUrl: served.url, apiKey: served.keys.limited, maxRetries: 0 });
    const first = await noRetry.createSession();
    const refused = await noRetry.createSession().catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(RateLimitedError);
    expect(refused).toMatchObject({ code: "RATE_LIMITED", status: 429, retryAfterSeconds: 1 });

    const retrying = new WardenClient({
      baseUrl: served.url,
      apiKey: served.keys.limited,
      maxRetries: 20,
      fetch: counting,
    });
    const second = retrying.createSession();
    while (!statuses.includes(429)) await new Promise((r) => setTimeout(r, 50));
    await noRetry.deleteSession(first.id);
    const created = await second;
    expect(statuses[0]).toBe(429);
    expect(statuses.at(-1)).toBe(201);
    await retrying.deleteSession(created.id);
  });
});

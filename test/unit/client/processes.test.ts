/** The TypeScript client's background processes against a fake fetch: the requests it sends and what it decodes. */
import { describe, expect, it } from "vitest";
import { type ProcessSignalName, WardenClient } from "../../../src/client/index.js";
import { PROCESS_SIGNALS } from "../../../src/process/index.js";

function fakeServer(answer: (url: URL, init: RequestInit) => unknown) {
  const seen: { method: string; url: string; body?: unknown }[] = [];
  const fetch = async (input: URL | string, init: RequestInit = {}) => {
    const url = new URL(String(input));
    seen.push({
      method: init.method ?? "GET",
      url: `${url.pathname}${url.search}`,
      ...(init.body ? { body: JSON.parse(String(init.body)) } : {}),
    });
    const value = answer(url, init);
    return value === undefined ? new Response(null, { status: 204 }) : Response.json(value);
  };
  return {
    seen,
    client: new WardenClient({
      baseUrl: "http://warden.test",
      apiKey: "k",
      fetch: fetch as typeof globalThis.fetch,
    }),
  };
}

describe("WardenClient.processes", () => {
  it("decodes output from base64 and sends input as text or base64", async () => {
    const { seen, client } = fakeServer((url) =>
      url.pathname.endsWith("/output")
        ? {
            offset: 4,
            nextOffset: 7,
            skipped: 0,
            data: Buffer.from([0, 0xff, 0x41]).toString("base64"),
            process: {},
          }
        : undefined,
    );
    const procs = client.processes("s 1");
    const out = await procs.output("p2", { offset: 4, maxBytes: 3 });
    expect([out.offset, out.nextOffset, [...out.data]]).toEqual([4, 7, [0, 255, 65]]);
    await procs.input("p2", "ls\n");
    await procs.input("p2", new Uint8Array([3]), { close: true });
    await procs.signal("p2", "INT");
    expect(seen).toEqual([
      { method: "GET", url: "/v1/sessions/s%201/processes/p2/output?offset=4&maxBytes=3" },
      { method: "POST", url: "/v1/sessions/s%201/processes/p2/input", body: { text: "ls\n" } },
      { method: "POST", url: "/v1/sessions/s%201/processes/p2/input", body: { base64: "Aw==", close: true } },
      { method: "POST", url: "/v1/sessions/s%201/processes/p2/signal", body: { signal: "INT" } },
    ]);
  });

  it("names the same signals as the server", () => {
    const names: ProcessSignalName[] = [...PROCESS_SIGNALS];
    expect(names).toEqual(["TERM", "INT", "KILL", "HUP", "QUIT", "USR1", "USR2", "STOP", "CONT", "WINCH"]);
  });
});

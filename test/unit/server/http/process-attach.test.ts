/**
 * attachSocket (src/server/http/process-attach.ts) on a stand-in socket and Processes: no output is
 * read while the socket holds more than 1 MiB unsent, the client's requests are applied in order,
 * a failed one is answered with an error message, and the session's close closes the socket (1001).
 * The whole route on a real server and engine: test/engine/server/process-attach.test.ts.
 */
import { EventEmitter } from "node:events";
import { describe, expect, it } from "vitest";
import { WardenError } from "../../../../src/errors.js";
import type { OutputSlice, Processes, ProcessInfo } from "../../../../src/process/index.js";
import { attachSocket } from "../../../../src/server/http/process-attach.js";

class FakeSocket extends EventEmitter {
  bufferedAmount = 0;
  sent: unknown[] = [];
  closedWith: [number, string] | undefined;
  send(data: unknown) {
    this.sent.push(typeof data === "string" ? JSON.parse(data) : Buffer.from(data as Buffer).toString());
  }
  close(code: number, reason: string) {
    if (this.closedWith) return;
    this.closedWith = [code, reason];
    this.emit("close");
  }
}

const INFO: ProcessInfo = {
  id: "p1",
  commandLine: "x",
  pty: true,
  state: "running",
  startedAt: new Date(0),
  outputBytes: 0,
  keptFrom: 0,
  droppedBytes: 0,
};

/** Processes whose output is `output` (growing as the test pushes to it); records the other calls. */
function fakeProcesses(output: { text: string }, calls: string[]): Processes {
  return {
    read: async (_id: string, o: { offset?: number } = {}): Promise<OutputSlice> => {
      calls.push(`read ${o.offset}`);
      const data = Buffer.from(output.text.slice(o.offset ?? 0));
      const offset = o.offset ?? 0;
      return { offset, data, nextOffset: offset + data.length, skipped: 0, process: INFO };
    },
    write: async (_id: string, data: Buffer) => void calls.push(`write ${data.toString()}`),
    resize: async (_id: string, s: { cols: number; rows: number }) =>
      void calls.push(`resize ${s.cols}x${s.rows}`),
    kill: async (_id: string, signal?: string) => void calls.push(`kill ${signal}`),
    closeInput: async () => {
      throw new WardenError(
        "CONFLICT",
        "Background process p1 has exited; it takes no more input or signals.",
      );
    },
  } as unknown as Processes;
}

function attach(socket: FakeSocket, processes: Processes) {
  let onClosed = (): void => undefined;
  attachSocket(socket as never, {
    processes,
    pid: "p1",
    offset: 0,
    attached: { id: "p1" },
    touch: () => undefined,
    onSessionClosed: (listener) => {
      onClosed = listener;
      return () => undefined;
    },
    onClosed: () => undefined,
  });
  return () => onClosed();
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe("attachSocket", () => {
  it("reads no output while more than 1 MiB waits in the socket", async () => {
    const socket = new FakeSocket();
    socket.bufferedAmount = 2 * 1024 * 1024;
    const calls: string[] = [];
    const output = { text: "abc" };
    const closeSession = attach(socket, fakeProcesses(output, calls));
    await sleep(200);
    expect(calls).toEqual([]);
    expect(socket.sent).toEqual([{ type: "attached", offset: 0, process: { id: "p1" } }]);
    socket.bufferedAmount = 0;
    await expect.poll(() => socket.sent.slice(1)).toEqual(["abc"]);
    output.text += "def";
    await expect.poll(() => socket.sent.slice(1)).toEqual(["abc", "def"]);
    closeSession();
    expect(socket.closedWith).toEqual([1001, "session closed"]);
  });

  it("applies the client's requests in order and answers a failed one", async () => {
    const socket = new FakeSocket();
    const calls: string[] = [];
    const closeSession = attach(socket, fakeProcesses({ text: "" }, calls));
    socket.emit("message", Buffer.from("hi\n"), true);
    socket.emit("message", Buffer.from('{"type":"resize","cols":100,"rows":30}'), false);
    socket.emit("message", Buffer.from('{"type":"signal","signal":"INT"}'), false);
    socket.emit("message", Buffer.from('{"type":"eof"}'), false);
    socket.emit("message", Buffer.from('{"type":"jump"}'), false);
    await expect.poll(() => socket.sent.length).toBe(3);
    expect(calls.filter((c) => !c.startsWith("read"))).toEqual(["write hi\n", "resize 100x30", "kill INT"]);
    expect(socket.sent.slice(1)).toEqual([
      {
        type: "error",
        code: "CONFLICT",
        message: "Background process p1 has exited; it takes no more input or signals.",
      },
      {
        type: "error",
        code: "INVALID_ARGUMENT",
        message: 'Unknown message type "jump"; send resize, signal or eof (input goes in binary messages).',
      },
    ]);
    closeSession();
  });
});

import { describe, expect, it } from "vitest";
import { InvalidArgumentError, NotFoundError, SandboxNotRunningError } from "../../../../../src/errors.js";
import { ChannelClient, type ChannelTransport } from "../../../../../src/sandbox/channel/protocol/client.js";
import { channelExec } from "../../../../../src/sandbox/channel/protocol/exec.js";
import {
  channelReadFile,
  channelStat,
  channelWriteFile,
} from "../../../../../src/sandbox/channel/protocol/files.js";
import {
  decodeJsonData,
  encodeFrame,
  encodeJsonData,
  type Frame,
  FrameDecoder,
  FrameType,
} from "../../../../../src/sandbox/channel/protocol/frame.js";
import { AbortError } from "../../../../../src/util/abort.js";

type Reply = (type: number, id: number, payload?: Buffer | object | null) => void;

/** An in-memory helper: `serve` sees each request frame and answers through `reply`. */
function fakeHelper(serve: (frame: Frame, reply: Reply) => void) {
  let sinks: { onData(c: Buffer): void; onClose(r: string): void } | undefined;
  const sent: Frame[] = [];
  const reply: Reply = (type, id, payload) => {
    const body =
      payload === undefined
        ? Buffer.alloc(0)
        : Buffer.isBuffer(payload)
          ? payload
          : Buffer.from(JSON.stringify(payload));
    const bytes = encodeFrame(type as never, id, body);
    setImmediate(() => sinks?.onData(bytes));
  };
  const decoder = new FrameDecoder((f) => {
    sent.push(f);
    serve(f, reply);
  });
  const transport: ChannelTransport = {
    write: (chunk) => decoder.push(chunk),
    start: (s) => {
      sinks = s;
    },
    close: () => setImmediate(() => sinks?.onClose("closed")),
  };
  return {
    client: new ChannelClient(transport, { containerId: "c0ffee0000000000" }),
    sent,
    drop: () => sinks?.onClose("gone"),
  };
}

describe("ChannelClient over a fake helper", () => {
  it("multiplexes concurrent commands and routes output by request id", async () => {
    const { client, sent } = fakeHelper((f, reply) => {
      if (f.type !== FrameType.exec) return;
      const argv = (JSON.parse(f.payload.toString()) as { argv: string[] }).argv;
      reply(FrameType.stdout, f.id, Buffer.from(`${argv[2]}-a `));
      reply(FrameType.stderr, f.id, Buffer.from(`${argv[2]}-err`));
      reply(FrameType.stdout, f.id, Buffer.from(`${argv[2]}-b`));
      reply(FrameType.exit, f.id, { code: argv[2] === "one" ? 0 : 3 });
    });
    const out: Record<string, string> = { one: "", two: "" };
    const errs: Record<string, string> = { one: "", two: "" };
    const run = (name: string) =>
      channelExec(
        client,
        { shell: name },
        {
          onStdout: (b) => {
            out[name] = `${out[name] ?? ""}${b}`;
          },
          onStderr: (b) => {
            errs[name] = `${errs[name] ?? ""}${b}`;
          },
        },
      );
    const [a, b] = await Promise.all([run("one"), run("two")]);
    expect([a.exitCode, b.exitCode]).toEqual([0, 3]);
    expect(out).toEqual({ one: "one-a one-b", two: "two-a two-b" });
    expect(errs).toEqual({ one: "one-err", two: "two-err" });
    expect(JSON.parse(sent[0]!.payload.toString())).toEqual({
      argv: ["bash", "-c", "one"],
      cwd: "/workspace",
      env: [
        "LANG=C.UTF-8",
        "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
        "HOME=/home/sandbox",
      ],
      pipeGraceMs: 100,
    });
    expect(client.inFlight).toBe(0);
  });

  it("on timeout sends kill with the grace and reports 124 / timedOut", async () => {
    const { client, sent } = fakeHelper((f, reply) => {
      if (f.type === FrameType.kill) reply(FrameType.exit, f.id, { code: 143, signal: 15 });
    });
    const r = await channelExec(client, { argv: ["sleep", "9"] }, { timeoutMs: 20 }, { killGraceMs: 250 });
    expect(r).toMatchObject({ exitCode: 124, timedOut: true, aborted: false });
    const kill = sent.find((f) => f.type === FrameType.kill)!;
    expect(JSON.parse(kill.payload.toString())).toEqual({ graceMs: 250 });
  });

  it("on abort sends kill and reports 130 / aborted with the partial output", async () => {
    const { client } = fakeHelper((f, reply) => {
      if (f.type === FrameType.exec) reply(FrameType.stdout, f.id, Buffer.from("partial"));
      if (f.type === FrameType.kill) reply(FrameType.exit, f.id, { code: 137, signal: 9 });
    });
    const ac = new AbortController();
    let out = "";
    const p = channelExec(client, { shell: "x" }, { signal: ac.signal, onStdout: (b) => (out += b) });
    setTimeout(() => ac.abort(), 20);
    expect(await p).toMatchObject({ exitCode: 130, aborted: true, timedOut: false });
    expect(out).toBe("partial");
  });

  it("maps helper errnos: ENOENT -> NotFoundError, EISDIR -> InvalidArgumentError", async () => {
    const { client } = fakeHelper((f, reply) => {
      const errno = f.type === FrameType.read ? "ENOENT" : "EISDIR";
      reply(FrameType.error, f.id, { errno, message: "x" });
    });
    await expect(
      channelReadFile(client, "/workspace/nope", { kind: "bytes", offset: 0, length: 1 }),
    ).rejects.toBeInstanceOf(NotFoundError);
    await expect(channelWriteFile(client, "/workspace", Buffer.from("x"))).rejects.toBeInstanceOf(
      InvalidArgumentError,
    );
  });

  it("read returns the data and totalLines as wc -l counts them; write sends JSON + bytes", async () => {
    let written: { json: unknown; data: string } | undefined;
    const { client } = fakeHelper((f, reply) => {
      if (f.type === FrameType.read) {
        reply(
          FrameType.result,
          f.id,
          encodeJsonData(
            { totalBytes: 9, counted: true, newlines: 3, endsWithNewline: true },
            Buffer.from("l2\n"),
          ),
        );
      } else if (f.type === FrameType.write) {
        const { json, data } = decodeJsonData(f.payload);
        written = { json, data: data.toString() };
        reply(FrameType.result, f.id, {});
      }
    });
    const r = await channelReadFile(client, "a", { kind: "lines", startLine: 2, maxLines: 1, maxBytes: 10 });
    expect(r).toEqual({ data: Buffer.from("l2\n"), totalBytes: 9, totalLines: 3 });
    await channelWriteFile(client, "/workspace/f", Buffer.from("body"), { mode: 0o600 });
    expect(written).toEqual({ json: { path: "/workspace/f", mode: 384 }, data: "body" });
  });

  it("an aborted file call rejects AbortError and drops the late reply", async () => {
    const late: (() => void)[] = [];
    const { client } = fakeHelper((f, reply) => late.push(() => reply(FrameType.result, f.id, null)));
    const ac = new AbortController();
    const p = channelStat(client, "/workspace", { signal: ac.signal });
    ac.abort();
    await expect(p).rejects.toBeInstanceOf(AbortError);
    expect(late).toHaveLength(1);
    late[0]?.(); // the reply, after the abort: delivered on the next setImmediate, as the fake's are
    await new Promise((r) => setImmediate(r));
    expect(client.inFlight).toBe(0);
    expect(client.closed).toBe(false);
  });

  it("a dropped channel rejects pending and later calls with SandboxNotRunningError", async () => {
    const { client, drop } = fakeHelper(() => {});
    const p = channelExec(client, { argv: ["true"] });
    drop();
    await expect(p).rejects.toBeInstanceOf(SandboxNotRunningError);
    expect(() =>
      client.open(FrameType.ping, Buffer.alloc(0), { onFrame: () => true, onClose: () => {} }),
    ).toThrow(SandboxNotRunningError);
    await expect(channelStat(client, "/x")).rejects.toBeInstanceOf(SandboxNotRunningError);
  });

  it("rejects a bad env name or timeout before sending anything", async () => {
    const { client, sent } = fakeHelper(() => {});
    await expect(channelExec(client, { argv: ["true"] }, { env: { "A-B": "1" } })).rejects.toBeInstanceOf(
      InvalidArgumentError,
    );
    await expect(channelExec(client, { argv: [] })).rejects.toThrow(
      "command.argv must be a non-empty array of strings.",
    );
    await expect(channelExec(client, { argv: ["true"] }, { timeoutMs: 0 })).rejects.toBeInstanceOf(
      InvalidArgumentError,
    );
    expect(sent).toHaveLength(0);
  });

  it("an already-aborted signal resolves as aborted without starting", async () => {
    const { client, sent } = fakeHelper(() => {});
    const ac = new AbortController();
    ac.abort();
    expect(await channelExec(client, { argv: ["true"] }, { signal: ac.signal })).toMatchObject({
      exitCode: 130,
      aborted: true,
    });
    expect(sent).toHaveLength(0);
  });
});

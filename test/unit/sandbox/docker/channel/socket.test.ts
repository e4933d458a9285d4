/**
 * Moving the channel from the attach stream onto the controller's unix socket (socket.ts), with a
 * fake helper on the host: it answers pings with pid 7 on the attach stream and pid 8 on the
 * socket, so each test sees which one carried the round trip.
 */
import { once } from "node:events";
import { mkdtemp, readdir, rm } from "node:fs/promises";
import { connect, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Duplex } from "node:stream";
import type Docker from "dockerode";
import { afterEach, describe, expect, it } from "vitest";
import {
  encodeFrame,
  type Frame,
  FrameDecoder,
  FrameType,
} from "../../../../../src/sandbox/channel/protocol/frame.js";
import { connectChannel } from "../../../../../src/sandbox/docker/channel/connect.js";
import { SWITCH_TIMEOUT_MS, unixSocketTransport } from "../../../../../src/sandbox/docker/channel/socket.js";

const dirs: string[] = [];
afterEach(async () => {
  for (const d of dirs.splice(0)) await rm(d, { recursive: true, force: true });
});

/**
 * How the fake helper serves `switch`: as the real one (`connect`), with an error frame
 * (`refuse`), after a stranger's connection with a wrong token (`wrong-token-first`), by dying
 * (`die`: its attach stream ends), by answering without ever connecting (`answer-only`), after
 * twelve idle strangers' connections (`crowd-first`), or by closing its connection right after
 * the token (`token-then-die`).
 */
type SwitchBehaviour =
  | "connect"
  | "refuse"
  | "wrong-token-first"
  | "die"
  | "answer-only"
  | "crowd-first"
  | "token-then-die";

/** A fake container whose helper handles ping and switch like images/sandbox/helper. */
function fakeContainer(socketDir: string, behaviour: SwitchBehaviour, version = "6") {
  let onSocket: Socket | undefined;
  let switches = 0;
  const strangers: Socket[] = [];
  const attach = new Duplex({
    read() {},
    write(chunk: Buffer, _enc, cb) {
      fromController.push(chunk);
      cb();
    },
  });
  const toAttach = (frame: Buffer) => {
    const header = Buffer.alloc(8);
    header[0] = 1; // stdout, in the engine's multiplexed stream format
    header.writeUInt32BE(frame.length, 4);
    attach.push(Buffer.concat([header, frame]));
  };
  const pong = (id: number, pid: number) =>
    encodeFrame(FrameType.pong, id, Buffer.from(JSON.stringify({ version, pid })));
  const serveSocket = (socket: Socket) => {
    const decoder = new FrameDecoder((f: Frame) => {
      if (f.type === FrameType.ping) socket.write(pong(f.id, 8));
    });
    socket.on("data", (c: Buffer) => decoder.push(c));
    socket.on("error", () => {});
  };
  const fromController = new FrameDecoder((f: Frame) => {
    if (f.type === FrameType.ping) return toAttach(pong(f.id, 7));
    if (f.type !== FrameType.switch) return;
    switches++;
    if (behaviour === "die") return void attach.push(null);
    if (behaviour === "answer-only")
      return toAttach(encodeFrame(FrameType.result, f.id, Buffer.from('{"transport":"socket"}')));
    if (behaviour === "refuse") {
      const body = { errno: "EINVAL", message: "unknown frame type 0x0a" };
      return toAttach(encodeFrame(FrameType.error, f.id, Buffer.from(JSON.stringify(body))));
    }
    const { token } = JSON.parse(f.payload.toString()) as { token: string };
    const path = join(socketDir, "channel.sock");
    const dial = (line: string, then: (s: Socket) => void) => {
      const s = connect(path, () => {
        s.write(line);
        then(s);
      });
      s.on("error", () => {});
    };
    const real = () =>
      dial(`${token}\n`, (s) => {
        onSocket = s;
        serveSocket(s);
        if (behaviour === "token-then-die") s.destroy();
        toAttach(encodeFrame(FrameType.result, f.id, Buffer.from('{"transport":"socket"}')));
      });
    if (behaviour === "wrong-token-first")
      dial(`${"0".repeat(64)}\n`, (s) => {
        strangers.push(s);
        setTimeout(real, 50);
      });
    else if (behaviour === "crowd-first") {
      let open = 0;
      for (let i = 0; i < 12; i++)
        dial("", (s) => {
          strangers.push(s);
          if (++open === 12) setTimeout(real, 20);
        });
    } else real();
  });
  const container = {
    id: "fake-container",
    attach: async () => attach,
    start: async () => undefined,
    inspect: async () => ({ State: { Running: true } }),
  } as unknown as Docker.Container;
  return { container, attach, socket: () => onSocket, switches: () => switches, strangers };
}

async function socketDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), "warden-socket-test-"));
  dirs.push(dir);
  return dir;
}

describe("connectChannel with a socket directory", () => {
  /** Connects to a fake helper that switches as `behaviour` says; the round trip must go over the socket. */
  async function onSocket(behaviour: SwitchBehaviour) {
    const dir = await socketDir();
    const fake = fakeContainer(dir, behaviour);
    const client = await connectChannel(fake.container, { socketDir: dir });
    expect({ transport: client.transportName, pong: await client.ping() }).toEqual({
      transport: "socket",
      pong: { version: "6", pid: 8 },
    });
    return { dir, fake, client };
  }

  it("moves the channel onto the socket: round trips go there, and the listening socket is removed", async () => {
    const { dir, client } = await onSocket("connect");
    expect(await readdir(dir)).toEqual([]);
    client.close();
  });

  it("serves only the connection that presents the token (a wrong one first is closed)", async () => {
    const { fake, client } = await onSocket("wrong-token-first");
    await expect.poll(() => fake.strangers.map((s) => s.destroyed)).toEqual([true]);
    client.close();
  });

  it("is not kept out by idle strangers' connections: the oldest are dropped, the token's is served", async () => {
    const { fake, client } = await onSocket("crowd-first");
    await expect.poll(() => fake.strangers.filter((s) => s.destroyed).length).toBe(12);
    client.close();
  });

  it("stays on the attach stream when the helper refuses the switch, and logs why", async () => {
    const dir = await socketDir();
    const fake = fakeContainer(dir, "refuse");
    const logged: string[] = [];
    const client = await connectChannel(fake.container, { socketDir: dir, switchLog: (m) => logged.push(m) });
    expect(client.transportName).toBe("attach");
    expect(await client.ping()).toEqual({ version: "6", pid: 7 });
    expect(logged).toEqual([
      expect.stringMatching(
        /^sandbox fake-contain: channel stays on the attach stream: .*unknown frame type 0x0a/,
      ),
    ]);
    client.close();
  });

  it("after the move, losing the attach stream keeps the channel; losing the socket ends it", async () => {
    const { fake, client } = await onSocket("connect");
    const attachClosed = once(fake.attach, "close");
    fake.attach.destroy();
    await attachClosed; // the client's own listeners heard it first
    await new Promise((r) => setImmediate(r));
    expect(client.closed).toBe(false);
    expect(await client.ping()).toEqual({ version: "6", pid: 8 });
    fake.socket()?.destroy();
    await expect.poll(() => client.closed).toBe(true);
    expect(client.closeReason).toMatch(/channel socket/);
  });
});

/** Connects to a helper of `version`, expecting it never asked to switch and `reason` logged; returns the client. */
async function expectNoSwitch(dir: string, version: string, reason: string) {
  const fake = fakeContainer(dir, "connect", version);
  const logged: string[] = [];
  const client = await connectChannel(fake.container, { socketDir: dir, switchLog: (m) => logged.push(m) });
  expect({ transport: client.transportName, switches: fake.switches(), logged }).toEqual({
    transport: "attach",
    switches: 0,
    logged: [reason],
  });
  return client;
}

describe("connectChannel when the switch cannot complete", () => {
  it("stays on the attach stream, asking nothing, when the directory's path is not root's alone", async () => {
    const dir = await socketDir();
    const { chown, writeFile } = await import("node:fs/promises");
    // What a path that fails the check leads to is never touched: not even a file named channel.sock.
    await writeFile(join(dir, "channel.sock"), "root's");
    await chown(dir, 1000, 1000);
    const client = await expectNoSwitch(
      dir,
      "6",
      `sandbox fake-contain: channel stays on the attach stream: cannot listen on ${dir}/channel.sock (${dir} is owned by uid 1000, not by root or this process (0))`,
    );
    expect(await readdir(dir)).toEqual(["channel.sock"]);
    client.close();
  });

  it("ends the channel at once when the socket closes right after the token (the closed socket is noticed when read)", async () => {
    const dir = await socketDir();
    const fake = fakeContainer(dir, "token-then-die");
    const client = await connectChannel(fake.container, { socketDir: dir });
    await expect
      .poll(() => client.closeReason)
      .toBe("the helper closed the channel socket (container stopped?)");
    await expect(client.ping()).rejects.toThrow("Sandbox container fake-contain is not running.");
    expect(await readdir(dir)).toEqual([]);
  });

  it("fails (no closed client is returned) when the channel closes during the switch", async () => {
    const dir = await socketDir();
    const fake = fakeContainer(dir, "die");
    await expect(connectChannel(fake.container, { socketDir: dir })).rejects.toThrow(
      "warden-helper is not available (Sandbox container fake-contain is not running.); falling back to docker exec is possible.",
    );
    expect(await readdir(dir)).toEqual([]);
  });

  it(
    "fails after SWITCH_TIMEOUT_MS when the helper answers but no connection presents the token",
    async () => {
      const dir = await socketDir();
      const fake = fakeContainer(dir, "answer-only");
      await expect(connectChannel(fake.container, { socketDir: dir })).rejects.toThrow(
        `warden-helper answered the channel switch, but no connection presented its token within ${SWITCH_TIMEOUT_MS} ms.`,
      );
      expect(await readdir(dir)).toEqual([]);
    },
    SWITCH_TIMEOUT_MS + 5000,
  );

  it("does not ask a helper older than version 6, and says why", async () => {
    const client = await expectNoSwitch(
      await socketDir(),
      "5",
      "sandbox fake-contain: channel stays on the attach stream: warden-helper 5 predates the socket (6); rebuild the image (npm run images)",
    );
    client.close();
  });
});

describe("unixSocketTransport", () => {
  it("closes the channel at start when its socket closed before", async () => {
    const dir = await socketDir();
    const { createServer } = await import("node:net");
    const server = createServer((s) => s.destroy());
    await new Promise<void>((r) => server.listen(join(dir, "s.sock"), r));
    const socket = connect(join(dir, "s.sock"));
    await new Promise((r) => socket.on("close", r));
    const reasons: string[] = [];
    unixSocketTransport(socket).start({ onData: () => {}, onClose: (reason) => reasons.push(reason) });
    expect(reasons).toEqual(["the channel socket closed before the channel moved onto it"]);
    server.close();
  });
});

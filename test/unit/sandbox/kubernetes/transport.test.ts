import { EventEmitter } from "node:events";
import type { Readable, Writable } from "node:stream";
import type { Exec, V1Status } from "@kubernetes/client-node";
import { describe, expect, it } from "vitest";
import { exitCodeOf } from "../../../../src/sandbox/kubernetes/index.js";
import { execChannel, helperEndedReason } from "../../../../src/sandbox/kubernetes/transport.js";

/** An Exec double: records the streams it was given and returns a socket the test drives. */
function fakeExec() {
  const socket = Object.assign(new EventEmitter(), { closed: false, close: () => (socket.closed = true) });
  const seen: {
    args: unknown[];
    stdout?: Writable;
    stderr?: Writable;
    stdin?: Readable;
    status?: (s: V1Status) => void;
  } = { args: [] };
  const exec = {
    exec: async (...args: unknown[]) => {
      seen.args = args.slice(0, 4).concat(args.slice(7, 8));
      [seen.stdout, seen.stderr, seen.stdin] = args.slice(4, 7) as [Writable, Writable, Readable];
      seen.status = args[8] as (s: V1Status) => void;
      return socket;
    },
  } as unknown as Exec;
  return { exec, socket, seen };
}

describe("the Pod exec-stream transport", () => {
  it("execs warden-helper --channel in the sandbox container without a TTY and delivers output written before start, in order", async () => {
    const { exec, seen } = fakeExec();
    const transport = await execChannel(exec, "ns", "pod-1");
    expect(seen.args).toEqual([
      "ns",
      "pod-1",
      "sandbox",
      ["/usr/local/bin/warden-helper", "--channel"],
      false,
    ]);
    seen.stdout!.write(Buffer.from("ab"));
    const got: string[] = [];
    transport.start({ onData: (c) => got.push(c.toString()), onClose: () => undefined });
    seen.stdout!.write(Buffer.from("cd"));
    await new Promise((r) => setImmediate(r));
    expect(got).toEqual(["ab", "cd"]);
  });

  it("sends frames to the helper's stdin, and sends nothing once closed", async () => {
    const { exec, seen, socket } = fakeExec();
    const transport = await execChannel(exec, "ns", "p");
    const sent: string[] = [];
    seen.stdin!.on("data", (c: Buffer) => sent.push(c.toString()));
    let closedWith = "";
    transport.start({ onData: () => undefined, onClose: (r) => (closedWith = r) });
    transport.write(Buffer.from("x"));
    transport.close();
    transport.write(Buffer.from("y"));
    await new Promise((r) => setImmediate(r));
    expect(sent).toEqual(["x"]);
    expect(socket.closed).toBe(true);
    expect(closedWith).toBe("the channel was closed");
  });

  it("reports the stream's end once, with the close code, as a lost connection, and the helper's stderr lines to the log", async () => {
    const { exec, seen, socket } = fakeExec();
    const lines: string[] = [];
    const transport = await execChannel(exec, "ns", "p", { log: (l) => lines.push(l) });
    const reasons: string[] = [];
    transport.start({ onData: () => undefined, onClose: (r, lost) => reasons.push(`${r} lost=${lost}`) });
    seen.stderr!.write(Buffer.from("one\ntw"));
    seen.stderr!.write(Buffer.from("o\n"));
    socket.emit("close", 1006);
    socket.emit("error", new Error("late"));
    await new Promise((r) => setImmediate(r));
    expect(lines).toEqual(["one", "two"]);
    expect(reasons).toEqual([
      "the Pod's exec stream closed without the helper's exit status (WebSocket code 1006: the connection was lost) lost=true",
    ]);
  });

  it("names the helper's exit when the API sent its status before the close: not a lost connection", async () => {
    const { exec, seen, socket } = fakeExec();
    const transport = await execChannel(exec, "ns", "p");
    const reasons: string[] = [];
    transport.start({ onData: () => undefined, onClose: (r, lost) => reasons.push(`${r} lost=${lost}`) });
    seen.status!({ status: "Failure", message: "command terminated with non-zero exit code: 137" });
    socket.emit("close", 1000);
    expect(reasons).toEqual([
      "the channel's helper in Pod ns/p ended (command terminated with non-zero exit code: 137) lost=false",
    ]);
  });

  it("pauses and resumes the WebSocket for the output share", async () => {
    const { exec, socket } = fakeExec();
    const calls: string[] = [];
    Object.assign(socket, { pause: () => calls.push("pause"), resume: () => calls.push("resume") });
    const transport = await execChannel(exec, "ns", "p");
    transport.pause?.();
    transport.resume?.();
    expect(calls).toEqual(["pause", "resume"]);
  });

  it("names the Pod and the RBAC rights when the exec is refused", async () => {
    const exec = { exec: async () => Promise.reject(new Error("403 Forbidden")) } as unknown as Exec;
    await expect(execChannel(exec, "ns", "p")).rejects.toThrow(
      "starting the channel in Pod ns/p failed: 403 Forbidden; check that the Pod runs and that the kubeconfig's user may create pods/exec.",
    );
  });
});

describe("exitCodeOf (pods/exec Status)", () => {
  it("reads 0 from Success, the ExitCode cause from a failure, -1 without one", () => {
    expect(exitCodeOf({ status: "Success" })).toBe(0);
    expect(
      exitCodeOf({ status: "Failure", details: { causes: [{ reason: "ExitCode", message: "137" }] } }),
    ).toBe(137);
    expect(exitCodeOf({ status: "Failure", message: "container not found" })).toBe(-1);
  });
});

describe("helperEndedReason (the channel's helper ended with a status)", () => {
  it("names the Pod, the API's message and, above 128, the signal", () => {
    const killed = (code: string) => ({
      status: "Failure",
      message: `command terminated with non-zero exit code: command terminated with exit code ${code}`,
      details: { causes: [{ reason: "ExitCode", message: code }] },
    });
    expect(helperEndedReason("ns", "p", killed("137"))).toBe(
      "the channel's helper in Pod ns/p ended (command terminated with non-zero exit code: command terminated with exit code 137; killed by signal 9, SIGKILL)",
    );
    expect(helperEndedReason("ns", "p", killed("2"))).toBe(
      "the channel's helper in Pod ns/p ended (command terminated with non-zero exit code: command terminated with exit code 2)",
    );
    expect(helperEndedReason("ns", "p", { status: "Failure" })).toBe(
      "the channel's helper in Pod ns/p ended (Failure)",
    );
  });
});

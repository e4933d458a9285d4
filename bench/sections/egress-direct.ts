/**
 * The two sides of every egress comparison: a command run in a warden session's sandbox (its
 * proxy and CA variables set, so it goes through the gateway) and the same command run by docker
 * exec in a plain running container of the same image, user, environment, limits and hardening
 * (copied from the sandbox container) on the test hosts' network (straight to the test host).
 */
import type Docker from "dockerode";
import { DEFAULT_IMAGE } from "../../src/sandbox/index.js";
import type { Session } from "../../src/session/index.js";

/** What a command printed (stdout and stderr, in order) and how it exited. */
export interface RunResult {
  exitCode: number;
  out: string;
}

/** One side: runs argv (with extra environment variables) and writes files. */
export interface Side {
  run(argv: string[], env?: Record<string, string>): Promise<RunResult>;
  writeFile(path: string, content: string): Promise<void>;
}

/** The sandbox's side: argv through the session's sandbox (the gateway's variables are added by warden). */
export function sandboxSide(session: Session, timeoutMs = 300_000): Side {
  return {
    async run(argv, env) {
      const out: Buffer[] = [];
      const onData = (c: Uint8Array) => {
        out.push(Buffer.from(c));
      };
      const r = await session.sandbox.exec(
        { argv },
        { timeoutMs, onStdout: onData, onStderr: onData, ...(env ? { env } : {}) },
      );
      return { exitCode: r.exitCode, out: Buffer.concat(out).toString("utf8") };
    },
    writeFile: (path, content) => session.sandbox.writeFile(path, Buffer.from(content)),
  };
}

/** Runs argv and returns its output; throws with the output when it exits non-zero. */
export async function runOk(
  side: Side,
  argv: string[],
  what: string,
  env?: Record<string, string>,
): Promise<string> {
  const r = await side.run(argv, env);
  if (r.exitCode !== 0) throw new Error(`${what} failed (exit ${r.exitCode}): ${r.out.slice(-800)}`);
  return r.out;
}

/**
 * A running plain container of the sandbox's image on `network`, with the sandbox container's
 * user, environment, limits and hardening; its run is docker exec. `remove` is idempotent.
 */
export async function directSide(
  docker: Docker,
  sandboxId: string,
  network: string,
): Promise<Side & { remove(): Promise<void> }> {
  const sandbox = await docker.getContainer(sandboxId).inspect();
  const h = sandbox.HostConfig;
  const c = await docker.createContainer({
    Image: sandbox.Config.Image || DEFAULT_IMAGE,
    User: sandbox.Config.User,
    Env: sandbox.Config.Env,
    WorkingDir: "/tmp",
    Entrypoint: ["sleep", "infinity"],
    Labels: { "io.warden.test": "egress-bench" },
    HostConfig: {
      NetworkMode: network,
      NanoCpus: h.NanoCpus,
      CpuQuota: h.CpuQuota,
      CpuPeriod: h.CpuPeriod,
      Memory: h.Memory,
      MemorySwap: h.MemorySwap,
      PidsLimit: h.PidsLimit,
      ReadonlyRootfs: h.ReadonlyRootfs,
      Tmpfs: h.Tmpfs,
      CapDrop: h.CapDrop,
      SecurityOpt: h.SecurityOpt,
      Init: h.Init,
      ...(h.Runtime ? { Runtime: h.Runtime } : {}),
    },
  });
  const remove = () => c.remove({ force: true }).catch(() => {});
  try {
    await c.start();
  } catch (err) {
    await remove();
    throw err;
  }
  const exec = async (argv: string[], env?: Record<string, string>, stdin?: string): Promise<RunResult> => {
    const e = await c.exec({
      Cmd: argv,
      AttachStdout: true,
      AttachStderr: true,
      AttachStdin: stdin !== undefined,
      ...(env ? { Env: Object.entries(env).map(([k, v]) => `${k}=${v}`) } : {}),
    });
    const stream = await e.start({ hijack: true, stdin: stdin !== undefined });
    const chunks: Buffer[] = [];
    const sink = { write: (b: Buffer) => chunks.push(b) };
    docker.modem.demuxStream(stream, sink as never, sink as never);
    if (stdin !== undefined) stream.end(stdin);
    await new Promise((r) => stream.on("end", r));
    const info = await e.inspect();
    return { exitCode: info.ExitCode ?? -1, out: Buffer.concat(chunks).toString("utf8") };
  };
  return {
    run: (argv, env) => exec(argv, env),
    async writeFile(path, content) {
      const r = await exec(["sh", "-c", 'cat > "$0"', path], undefined, content);
      if (r.exitCode !== 0) throw new Error(`writing ${path} in the direct container failed: ${r.out}`);
    },
    remove,
  };
}

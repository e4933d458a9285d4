/**
 * Types of warden's allow / ask / deny policies: the loaded policy (one layer per file, highest
 * first), the request evaluated against it and the decision with its trail.
 */

import type { NetworkRule, SecretBinding } from "../egress/index.js";
import type { ProcessRecord } from "../process/index.js";

import type { WalkEntry } from "./live-walk.js";

/** What a rule decides. Strictest wins: deny > ask > allow. */
export type PolicyDecisionKind = "allow" | "ask" | "deny";

/** Rank of each decision; a higher rank is stricter. */
export const DECISION_RANK: Record<PolicyDecisionKind, number> = { allow: 0, ask: 1, deny: 2 };

/** The stricter of two decisions. */
export function stricter(a: PolicyDecisionKind, b: PolicyDecisionKind): PolicyDecisionKind {
  return DECISION_RANK[a] >= DECISION_RANK[b] ? a : b;
}

/** Layer names, highest authority first. A lower layer may tighten, never loosen, a higher one. */
export const LAYER_NAMES = ["operator", "tenant", "project", "session"] as const;

/**
 * One rule. `tools` lists the tool names it covers (`*` = every tool). Matchers:
 * - `commands`: for bash, argv-word patterns (see command-pattern.ts), matched against every simple
 *   command of the script after unwrapping;
 * - `paths`: globs on the canonical path (see glob.ts), for path tools and for bash redirections
 *   (an output redirection is a `write`, an input redirection a `read`);
 * - `input` (process tool only): program names whose process may be sent input (the process
 *   tool's `input` action; input to any other program is opaque);
 * - `actions` (process tool only): the process tool's actions judged by name (output, list,
 *   wait, kill).
 * A rule with none of them matches every call of its tools. A process tool's `start` is judged as
 * a bash command: rules with `commands` / `paths` on bash or on process apply to it.
 */
export interface PolicyRule {
  id: string;
  decision: PolicyDecisionKind;
  tools: string[];
  commands?: string[];
  paths?: string[];
  /** Shown to the model and the approver. */
  reason?: string;
  /**
   * For an allow rule with commands: the effects it accepts. A command the model describes
   * (commands/model.ts) matches the rule only in forms whose effects are all listed here, and never
   * in a form the model cannot read (an unknown option).
   */
  effects?: ("write" | "exec" | "network")[];
  /** Programs (command names, e.g. `python3`) whose process the rule lets the process tool send input. */
  input?: string[];
  /** The process tool's actions the rule decides by name. */
  actions?: ProcessRuleAction[];
}

/** The process tool's actions a rule's `actions` may name: those that run nothing (start and input are judged by what they run). */
export const PROCESS_RULE_ACTIONS = ["output", "list", "wait", "kill"] as const;
type ProcessRuleAction = (typeof PROCESS_RULE_ACTIONS)[number];

/** An example call and the decision the policy must give it (`warden policy check`). */
export interface PolicyTest {
  tool: string;
  args: Record<string, unknown>;
  expect: PolicyDecisionKind;
  /** When set, the deciding rule id must be this. */
  rule?: string;
  /** Free text shown when the test fails. */
  note?: string;
}

/** One policy file, as loaded and validated. */
export interface PolicyLayer {
  /** Layer label: the file's `layer:` or its position (operator, tenant, project, session). */
  layer: string;
  /** Path of the file it came from. */
  file: string;
  name?: string;
  description?: string;
  /** Decision for a call or command part no rule of this layer matches; absent = the layer abstains. */
  default?: PolicyDecisionKind;
  /** When true, anything this layer's evaluation would ask is denied (CI: nobody to ask). */
  nonInteractive: boolean;
  /**
   * Longest bash command analysed, in UTF-8 bytes; a longer one is refused before parsing. The
   * smallest over the layers applies, else DEFAULT_MAX_COMMAND_BYTES (command-limit.ts).
   */
  maxCommandBytes?: number;
  rules: PolicyRule[];
  tests: PolicyTest[];
  /** The `network:` section's rules (network-section.ts); absent when the file has none. */
  network?: NetworkRule[];
  /**
   * The `secrets:` section's binding of each secret it names (secrets-section.ts); absent when the
   * file has none (the layer abstains), `{}` when it withholds every secret.
   */
  secrets?: Record<string, SecretBinding>;
  /**
   * Problems that do not stop the file loading, each `file:line:col: text` (rules shadowed by an
   * earlier rule: policy-lint.ts); `warden policy check` prints them.
   */
  findings?: string[];
}

/** A loaded policy: layers, highest authority first (operator > tenant > project > session). */
export interface Policy {
  layers: PolicyLayer[];
}

/** The call to decide on: tool name and its validated arguments. */
export interface PolicyRequest {
  tool: string;
  args: unknown;
}

/** What evaluate needs from the outside world. */
export interface EvaluateContext {
  /**
   * Canonical absolute path of a normalised absolute container path (sandbox.realpath; symlinks
   * and `..` followed). The policy CLI resolves lexically instead.
   */
  resolvePath(path: string): Promise<string>;
  /**
   * For read: the canonical path read opens instead of `path` (a tool argument as given) when `path`
   * does not exist, one of Pi's other spellings of it (src/tools/read-sandbox-file.ts existingVariant);
   * undefined when `path` exists or no spelling does. Absent: no variant is judged (the policy CLI).
   */
  readVariant?(path: string): Promise<string | undefined>;
  /**
   * Reads a small text file in the sandbox (null when absent or not a regular file), for git's
   * configuration (commands/git-config.ts). Absent (the policy CLI): git's configuration is not checked.
   */
  readText?(path: string): Promise<string | null>;
  /**
   * The entries below a directory in the sandbox as they are now (live-walk.ts walkDirectory:
   * `hidden` false leaves out dot entries), or null when that cannot be told. Absent (the policy
   * CLI): listings, globs and recursive searches are judged lexically (live-paths.ts).
   */
  walk?(dir: string, hidden: boolean): Promise<WalkEntry[] | null>;
  /**
   * The controller's record of the session's process `id` (Processes.records(): the command it was
   * started with, never read back from the sandbox), or undefined when the session has none of
   * that id. Absent (the policy CLI, a session without processes): input to a process is opaque.
   */
  processRecord?(id: string): ProcessRecord | undefined;
}

/** One step of a decision's trail: a command part, a path or a redirection, and what decided it. */
export interface TrailEntry {
  /** `command` (a simple command of a bash script), `opaque` (not reducible), `path`, `write`, `read`, `call`. */
  kind: "command" | "opaque" | "path" | "write" | "read" | "argument" | "call";
  /** The command text (argv words joined) or the canonical path. */
  part: string;
  decision: PolicyDecisionKind;
  /** The rule that decided it; absent when a default decided (`ruleId` then names `<layer>:default`). */
  ruleId?: string;
  layer?: string;
  reason?: string;
  /** Wrappers unwrapped to reach this part (`sudo`, `bash -c`, `find -exec`...). */
  via?: string[];
  /**
   * What an "allow for this session" answer covers for this entry (an opaque key, set by
   * evaluate): the tool, the kind and the exact analysed part — argv values, the canonical path,
   * or for a tool judged by name only a digest of its arguments — or, for a part whose meaning
   * depends on the rest of the script (opaque parts, variables, substitutions, globs, pipes,
   * wrappers), a digest of the whole command. Equal keys, same thing.
   */
  approvalScope?: string;
}

/** A policy decision: the strictest over all parts and layers, and the part and rule that set it. */
export interface Decision {
  decision: PolicyDecisionKind;
  ruleId?: string;
  reason?: string;
  layer?: string;
  /** The part that decided (command text or path). */
  part?: string;
  trail: TrailEntry[];
}

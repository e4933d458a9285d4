/**
 * The layer order of src/, written once: a unit (a folder under src/, or a file directly in it)
 * imports only units listed before it, and another folder only through that folder's index.ts.
 * test/unit/architecture.test.ts enforces it; README.md's layout tree lists the same units in
 * the same order for readers (the test compares them).
 */

/** One unit of src/ in layer order, with why it sits where it does. */
export interface Layer {
  /** A folder under src/ (`tools`) or a file directly in src/ without `.ts` (`errors`). */
  unit: string;
  /** One line: what it is and why it sits at this height. */
  reason: string;
}

/** Lowest first. */
export const LAYERS: readonly Layer[] = [
  { unit: "errors", reason: "WardenError and its subclasses with stable codes; imports nothing" },
  { unit: "version", reason: "the package version; imports nothing" },
  { unit: "util", reason: "abort signals, slots, the worker pool, line diffs: no warden concept" },
  { unit: "truncate", reason: "pure head/tail truncation of output, UTF-8 safe; no I/O" },
  {
    unit: "egress",
    reason: "the network allowlist rules and the per-session Squid gateway that sandbox creation attaches",
  },
  {
    unit: "sandbox",
    reason:
      "the Sandbox and SandboxBackend interfaces, the Docker, Kubernetes and memory backends and the warm pool: all tool I/O goes through it",
  },
  {
    unit: "process",
    reason:
      "background processes: shims started through the Sandbox's ProcessIO, their output, input and signals as files; below tools, whose process tool drives it",
  },
  {
    unit: "tools",
    reason:
      "Pi's seven tools and the opt-in process tool, built on the Sandbox and Processes interfaces and truncation",
  },
  {
    unit: "pipeline",
    reason: "a call's stages and hooks; owns the hook contract and the call decision types",
  },
  {
    unit: "audit",
    reason:
      "one JSON line per policy decision, and the server audit log's hash chain, signed checkpoints, verify and OCSF mapping; below policy, whose hook writes the first",
  },
  {
    unit: "policy",
    reason: "allow/ask/deny: load, analyse, evaluate; its hook defines the ApprovalProvider it asks",
  },
  {
    unit: "approval",
    reason: "the ApprovalProvider implementations (terminal, programmatic, non-interactive)",
  },
  { unit: "session", reason: "a sandbox, spill store, enabled tools and hooks, run through the pipeline" },
  { unit: "review", reason: "a copy-mode session's changes, patch and three-way apply to the host" },
  { unit: "mcp", reason: "one session's tools served over MCP (stdio in the CLI, HTTP in serve)" },
  { unit: "agent", reason: "`warden run`: the model loop, its transcript and terminal rendering" },
  { unit: "server", reason: "`warden serve`: the multi-tenant HTTP API over pooled sessions" },
  {
    unit: "client",
    reason: "`warden/client`, shipped to users: only errors.ts and, type-only, the server's route schemas",
  },
  { unit: "cli", reason: "the commander program, one file per command; the top of the tool" },
  { unit: "index", reason: "the library's public API, name by name (package entry point)" },
];

/**
 * Imports allowed to bypass a folder's index.ts, each with its reason: `from` and `to` are paths
 * under src/ (regular expressions), `typeOnly` requires the import to be type-only.
 */
export const INDEX_EXCEPTIONS: readonly { from: string; to: string; typeOnly: boolean; reason: string }[] = [
  {
    from: "^src/client/",
    to: "^src/server/http/schemas\\.ts$",
    typeOnly: true,
    reason: "the shipped client takes the route schemas' types only; nothing of the server loads with it",
  },
  {
    from: "^src/sandbox/types\\.ts$",
    to: "^src/egress/types\\.ts$",
    typeOnly: true,
    reason:
      "the Sandbox types name NetworkOptions only; egress/index.ts would pull the gateway's Docker code into the channel protocol's import graph",
  },
  {
    from: "^src/",
    to: "^src/sandbox/kubernetes/index\\.ts$",
    typeOnly: false,
    reason:
      "the Kubernetes backend's surface, kept out of sandbox/index.ts so that the public API's types never name @kubernetes/client-node (an optional package)",
  },
];

/** What the shipped client may import besides itself (everything else of src/ is refused). */
export const CLIENT_IMPORTS: readonly string[] = ["^src/errors\\.ts$", "^src/server/http/schemas\\.ts$"];

/**
 * The backend folders of src/sandbox (one per engine, issue 38): none imports another, so that a
 * backend is one folder that the registry (src/sandbox/backends.ts) names and nothing else does.
 */
export const BACKEND_FOLDERS: readonly string[] = ["sandbox/docker", "sandbox/kubernetes", "sandbox/memory"];

/**
 * Folders of src/ that reach sandboxes through the SandboxBackend interface only (issue 38: the
 * server imports only the backend interface's few names): they import no backend folder, not even
 * its index.ts, type-only included.
 */
export const BACKEND_BLIND: readonly { folder: string; reason: string }[] = [
  {
    folder: "server",
    reason:
      "warden serve opens its backend with openSandboxBackend and checks its config section with resolveBackendConfig (src/sandbox/backends.ts); the engines stay behind that seam",
  },
];

/** Docker code: the dockerode package (its types included, wherever node_modules is) and Docker's backend folder. */
export const DOCKER_CODE = "(^|/)node_modules/(@types/)?dockerode/|^src/sandbox/docker/";

/**
 * Folders that must not reach Docker code, directly or through other modules (type-only and
 * dynamic imports included): the Kubernetes and memory backends' own code never needs the Docker
 * backend (a process that imports sandbox/index.ts still loads it: the index exports Docker's
 * names), and the channel protocol carries over any byte stream (a Docker socket or attach, a
 * Pod's exec stream).
 * `notEntered` are modules the search does not go through, each with its reason.
 */
export const DOCKER_FREE: readonly { folder: string; notEntered: readonly string[]; reason: string }[] = [
  { folder: "sandbox/channel", notEntered: [], reason: "the engine-free channel protocol" },
  {
    folder: "sandbox/kubernetes",
    notEntered: ["src/egress/index.ts"],
    reason:
      "the Kubernetes backend; it validates options with the shared resolveSandboxOptions, whose network check comes from egress/ (the gateway there is Docker; a Pod refuses allowlist networks)",
  },
  {
    folder: "sandbox/memory",
    notEntered: ["src/egress/index.ts"],
    reason: "the in-memory backend; egress/ as for Kubernetes (it refuses allowlist networks)",
  },
];

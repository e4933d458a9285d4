/**
 * What a sandbox Pod carries about its session, so `warden gc` and the server's reconcile find and
 * judge Pods after a controller crash (as Docker's labels do, ../labels.ts). Labels are what the
 * API selects on: `app.kubernetes.io/managed-by=warden`, the session id, the tenant, the
 * replica of `warden serve` that owns the Pod (each replica lists only its own) and (for a warm
 * pool spare) the pool key's digest. Kubernetes label values are at most 63 characters of
 * [A-Za-z0-9_.-], so the full values (controller ids like `serve@host` or `host:pid`, ISO times,
 * the whole pool key) travel as annotations under the same io.warden.* keys Docker uses.
 */
import { randomBytes } from "node:crypto";
import { InvalidArgumentError } from "../../errors.js";
import { LABEL } from "../labels.js";
import type { SandboxLimits } from "../types.js";

/** The label every warden Pod carries (Kubernetes' recommended managed-by label). */
export const MANAGED_BY = { key: "app.kubernetes.io/managed-by", value: "warden" } as const;

/** Label selector of every warden sandbox Pod. */
export const WARDEN_POD_SELECTOR = `${MANAGED_BY.key}=${MANAGED_BY.value}`;

/** Label and annotation naming a warm pool spare's key (its digest as label, the key as annotation). */
const POD_POOL_KEY = "io.warden.pool";

/**
 * Label naming the `warden serve` replica that owns a Pod (its `backend.replicaId`): a replica's
 * reconcile, adoption and pool select on it, so they never see another replica's Pods. Pods made
 * outside a server (the library, tests) have none.
 */
const POD_REPLICA = "io.warden.replica";

/** Label selector of the Pods of replica `replicaId`. */
export function replicaSelector(replicaId: string): string {
  return `${WARDEN_POD_SELECTOR},${POD_REPLICA}=${requireLabelValue(replicaId, "replicaId")}`;
}

/** Annotation keeping the requested pids limit (the Pod spec has no per-container pids field). */
const POD_PIDS = "io.warden.pids";

/** The session state a Pod carries. */
export interface PodState {
  sessionId: string;
  tenant: string;
  /** Owner id (`hostname:pid`, or a stable `serve@host`). */
  controller: string;
  createdAt: Date;
  expiresAt: Date;
  /** The warm pool key (`sha256:<hex>`) of a spare. */
  poolKey?: string;
  /** The owning `warden serve` replica (POD_REPLICA), when a server made the Pod. */
  replica?: string;
}

// Kubernetes' label value syntax (k8s.io/apimachinery validation.IsValidLabelValue).
const LABEL_VALUE = /^(?:[A-Za-z0-9](?:[A-Za-z0-9_.-]{0,61}[A-Za-z0-9])?)$/;

/** Whether `value` is a valid Kubernetes label value (at most 63 of [A-Za-z0-9_.-], alphanumeric at both ends). */
export function isLabelValue(value: string): boolean {
  return LABEL_VALUE.test(value);
}

/** Throws InvalidArgumentError naming `field` when `value` cannot be a Kubernetes label value. */
export function requireLabelValue(value: string, field: string): string {
  if (!isLabelValue(value)) {
    throw new InvalidArgumentError(
      `${field} ${JSON.stringify(value)} cannot be a Kubernetes label value (at most 63 of A-Z a-z 0-9 _ . -, starting and ending with a letter or digit); choose one that is.`,
    );
  }
  return value;
}

/** The Pod's labels. Throws InvalidArgumentError when the session id or tenant is no label value. */
export function podLabels(state: PodState): Record<string, string> {
  return {
    [MANAGED_BY.key]: MANAGED_BY.value,
    [LABEL.session]: requireLabelValue(state.sessionId, "sessionId"),
    [LABEL.tenant]: requireLabelValue(state.tenant, "tenant"),
    ...(state.poolKey ? { [POD_POOL_KEY]: poolKeyLabel(state.poolKey) } : {}),
    ...(state.replica ? { [POD_REPLICA]: requireLabelValue(state.replica, "replicaId") } : {}),
  };
}

/** The pool key as a label value: its hex digest's first 63 characters. */
function poolKeyLabel(poolKey: string): string {
  return poolKey.replace(/^sha256:/, "").slice(0, 63);
}

/** The Pod's annotations: the full state under Docker's label keys, plus the requested pids limit. */
export function podAnnotations(state: PodState, limits: SandboxLimits): Record<string, string> {
  return {
    [LABEL.session]: state.sessionId,
    [LABEL.tenant]: state.tenant,
    [LABEL.created]: state.createdAt.toISOString(),
    [LABEL.expires]: state.expiresAt.toISOString(),
    [LABEL.controller]: state.controller,
    [POD_PIDS]: String(limits.pids),
    ...(state.poolKey ? { [POD_POOL_KEY]: state.poolKey } : {}),
  };
}

/**
 * The state read back from a Pod's metadata; null when it is not a warden Pod (no managed-by
 * label, or a missing session or tenant).
 */
export function podStateOf(metadata: {
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
}): PodState | null {
  const labels = metadata.labels ?? {};
  const notes = metadata.annotations ?? {};
  if (labels[MANAGED_BY.key] !== MANAGED_BY.value) return null;
  const sessionId = notes[LABEL.session] ?? labels[LABEL.session];
  const tenant = notes[LABEL.tenant] ?? labels[LABEL.tenant];
  if (!sessionId || !tenant) return null;
  const poolKey = notes[POD_POOL_KEY];
  const replica = labels[POD_REPLICA];
  return {
    sessionId,
    tenant,
    controller: notes[LABEL.controller] ?? "",
    createdAt: new Date(notes[LABEL.created] ?? 0),
    expiresAt: new Date(notes[LABEL.expires] ?? 0),
    ...(poolKey ? { poolKey } : {}),
    ...(replica ? { replica } : {}),
  };
}

/**
 * A fresh Pod name for `sessionId`: `warden-`, the id lower-cased with other characters as `-`
 * (at most 40), and 8 random hex digits, so a re-created session never collides with a Pod
 * still terminating. A valid DNS-1123 label (at most 56 characters).
 */
export function podName(sessionId: string): string {
  return `warden-${dnsNamePart(sessionId)}${randomBytes(4).toString("hex")}`;
}

/**
 * `text` lower-cased with runs of other characters than [a-z0-9-] as `-`, at most 40, without
 * leading or trailing `-`, and followed by `-`; "" when nothing is left. The readable part of a
 * generated object name (Pods, Leases).
 */
export function dnsNamePart(text: string): string {
  const base = text
    .toLowerCase()
    .replace(/[^a-z0-9-]+/g, "-")
    .slice(0, 40)
    .replace(/^-+|-+$/g, "");
  return base ? `${base}-` : "";
}

/**
 * The OCSF (Open Cybersecurity Schema Framework, schema 1.3.0) form of one server audit record
 * (pure), for `warden audit export --format ocsf`. Class per kind (docs/audit.md):
 * - `network`: a CONNECT tunnel → Network Activity (4001: 6 Traffic, or 5 Refuse when denied);
 *   a plain-HTTP request or a request inside a tunnel → HTTP Activity (4002, its method's activity).
 * - `network-dropped` → Network Activity (4001, 99 Other: records not written, counted).
 * - `secret`: a used secret → HTTP Activity (4002); a refused one (an attempted leak) → Detection
 *   Finding (2004, 1 Create).
 * - `tool`, `approval`, `interrupted`, `request`, `session` → API Activity (6003): session created
 *   1 Create, closed or removed 4 Delete, the others 99 Other with the kind as activity_name.
 * - `checkpoint`, `audit-key` → Base Event (0).
 * Fields OCSF has no place for are kept under `unmapped`; `metadata.uid` is the line's hash.
 */

/** The OCSF schema version of the export. */
export const OCSF_VERSION = "1.3.0";

/** One OCSF event (the attributes warden fills; others are absent). */
export interface OcsfEvent {
  class_uid: number;
  category_uid: number;
  activity_id: number;
  activity_name: string;
  type_uid: number;
  /** Epoch ms. */
  time: number;
  severity_id: number;
  status_id?: number;
  metadata: { version: string; uid: string; product: { name: string; vendor_name: string } };
  actor?: { user: { uid: string; type: string } };
  [field: string]: unknown;
}

const HTTP_ACTIVITY: Record<string, number> = {
  CONNECT: 1,
  DELETE: 2,
  GET: 3,
  HEAD: 4,
  OPTIONS: 5,
  POST: 6,
  PUT: 7,
  TRACE: 8,
};

/** class_uid → category_uid. */
const CATEGORY: Record<number, number> = { 0: 0, 2004: 2, 4001: 4, 4002: 4, 6003: 6 };

/** The OCSF event of `record` (a parsed audit line) whose line hashes to `hash`. */
export function toOcsf(record: Record<string, unknown>, hash: string): OcsfEvent {
  const { level: _level, time, kind, chain, ...rest } = record;
  const [classUid, activityId, activityName] = classify(String(kind), rest);
  const denied = typeof rest.decision === "string" && /deny|refuse/.test(rest.decision);
  const tenant = typeof rest.tenant === "string" ? rest.tenant : undefined;
  const event: OcsfEvent = {
    class_uid: classUid,
    category_uid: CATEGORY[classUid] ?? 0,
    activity_id: activityId,
    activity_name: activityName,
    type_uid: classUid * 100 + activityId,
    time: Date.parse(String(time)),
    severity_id: denied || kind === "interrupted" ? 3 : 1,
    ...(typeof rest.decision === "string" ? { status_id: denied ? 2 : 1 } : {}),
    metadata: {
      version: OCSF_VERSION,
      uid: hash,
      product: { name: "warden", vendor_name: "warden" },
    },
    ...(tenant ? { actor: { user: { uid: tenant, type: "tenant" } } } : {}),
    ...endpoints(rest),
    ...classRequired(classUid, String(kind), rest, hash, tenant),
    unmapped: { kind, ...rest, chain },
  };
  return event;
}

/** [class_uid, activity_id, activity_name] of a record of `kind`. */
function classify(kind: string, r: Record<string, unknown>): [number, number, string] {
  const method = String(r.method ?? "").toUpperCase();
  const http = (): [number, number, string] => [4002, HTTP_ACTIVITY[method] ?? 99, method || "Other"];
  switch (kind) {
    case "network":
      if (method === "CONNECT" && !r.insideTunnel)
        return String(r.decision).endsWith("deny") ? [4001, 5, "Refuse"] : [4001, 6, "Traffic"];
      return http();
    case "network-dropped":
      return [4001, 99, "network-dropped"];
    case "secret":
      return r.decision === "refuse" ? [2004, 1, "Create"] : http();
    case "session":
      if (r.event === "created") return [6003, 1, "Create"];
      if (r.event === "closed" || r.event === "orphan-removed") return [6003, 4, "Delete"];
      return [6003, 99, `session ${String(r.event)}`];
    case "tool":
    case "approval":
    case "interrupted":
    case "request":
      return [6003, 99, kind];
    default:
      return [0, 0, kind];
  }
}

/**
 * The attributes OCSF requires of the class besides the base event's (ocsf-schema: API Activity
 * requires `actor`, `api` with `operation`, and `src_endpoint`; a finding requires `finding_info`
 * with `uid`). warden does not record the API client's address: `src_endpoint` names the tenant.
 */
function classRequired(
  classUid: number,
  kind: string,
  r: Record<string, unknown>,
  hash: string,
  tenant: string | undefined,
): Record<string, unknown> {
  if (classUid === 6003) {
    const who = tenant ? `tenant ${tenant}` : "unauthenticated client";
    return {
      ...(tenant ? {} : { actor: { app_name: "warden serve" } }),
      api: { operation: apiOperation(kind, r) },
      src_endpoint: { name: who },
    };
  }
  if (classUid === 2004) {
    const names = Array.isArray(r.secrets) ? r.secrets.join(" ") : "";
    return {
      finding_info: { uid: hash, title: `secret placeholder refused: ${String(r.reason)} ${names}`.trim() },
    };
  }
  return {};
}

/** What an API Activity record did, as `api.operation`. */
function apiOperation(kind: string, r: Record<string, unknown>): string {
  if (kind === "request") return `${String(r.method)} ${String(r.route)}`;
  if (kind === "tool" || kind === "interrupted") return `tool ${String(r.tool)}`;
  if (kind === "approval") return `approval ${String(r.answer)}`;
  return `session ${String(r.event)}`;
}

/** `dst_endpoint` and `http_request` of a network or secret record. */
function endpoints(r: Record<string, unknown>): Record<string, unknown> {
  const host = typeof r.domain === "string" ? r.domain : typeof r.host === "string" ? r.host : undefined;
  if (!host) return {};
  return {
    dst_endpoint: { hostname: host, ...(typeof r.port === "number" ? { port: r.port } : {}) },
    ...(typeof r.method === "string"
      ? {
          http_request: {
            http_method: r.method,
            ...(typeof r.path === "string" ? { url: { path: r.path } } : {}),
          },
        }
      : {}),
  };
}

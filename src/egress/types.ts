/**
 * The network side of a session: `none` (the default: no network interface at all) or
 * `allowlist` (the sandbox's only route is a per-session egress gateway that lets through the
 * listed domain names and ports and nothing else). See docs/network.md.
 */
import type { SecretRefusal, SessionSecret } from "./secrets.js";

/** What one rule does with a connection whose domain and port it matches. */
export type NetworkDecision = "allow" | "ask" | "deny";

/**
 * One domain rule. `host` is a lower-case DNS name (`pypi.org`) or a wildcard of its subdomains
 * (`*.pythonhosted.org`: any name ending in `.pythonhosted.org`, not the bare domain); `ports` are
 * TCP ports (default [80, 443]). `source` names where the rule came from (a policy file:line,
 * `--allow-net`), for audit lines.
 */
export interface NetworkRule {
  host: string;
  ports: number[];
  decision: NetworkDecision;
  source?: string;
}

/** One connection through the gateway, from its records (connection-records.ts: one per connection). */
export interface ConnectionAudit {
  /** The session the sandbox belongs to. */
  sessionId: string;
  /** Time the connection ended (ISO-8601). */
  time: string;
  /** The name (or IP literal) the sandbox asked for. */
  domain: string;
  port: number;
  /** `CONNECT` (TLS tunnel) or the plain-HTTP method. */
  method: string;
  /** The TLS SNI the client sent, when it was a tunnel or a request inside one. */
  sni?: string;
  /**
   * True for a request inside a TLS tunnel the gateway opened (the tunnel has its own record,
   * method CONNECT, with the bytes of the CONNECT exchange; the bytes that passed through the
   * tunnel are in its requests' records).
   */
  insideTunnel?: true;
  /**
   * `allow` / `deny` by a rule or a refusal; `ask→allow` / `ask→deny` for a connection under an
   * `ask` rule, by the approver's answer (`ask` says how it was answered).
   */
  decision: "allow" | "deny" | "ask→allow" | "ask→deny";
  /** For a connection under an `ask` rule: how the question was answered (see AskOutcome). */
  ask?: AskOutcome;
  /** The rule that decided (`host:ports` as written) or the refusal's reason. */
  rule: string;
  /**
   * Set when the gateway refused a connection its rule (or its approver) let through: which of its
   * own checks refused it (the same word starts `rule`). See GatewayRefusal.
   */
  refusal?: GatewayRefusal;
  /** Bytes the sandbox sent and received. */
  bytesOut: number;
  bytesIn: number;
  durationMs: number;
  /** The address the gateway connected to, when it connected. */
  remoteAddress?: string;
  /** Secrets (names) whose placeholders this request carried: replaced, or the refusal's (`refusal: "secret"`). */
  secrets?: string[];
}

/**
 * Why the gateway refused a connection a rule let through: `sni-mismatch` (a tunnel's TLS SNI is not
 * its CONNECT host, or it carries no TLS), `host-sni-mismatch` (a request inside an opened tunnel
 * names another host than its SNI), `upstream-tls` (the gateway's own TLS connection to the origin
 * failed: a certificate no CA it trusts signed, as behind a TLS-intercepting proxy, whose CA
 * `caBundlePath` adds), `refused-address` (the name resolved to a refused address, when it was
 * checked or when the gateway connected), `unreachable` (the name does not resolve, or the origin
 * did not accept the connection), `method` (TRACE, never forwarded: an origin answering it would
 * reflect the forwarded request, a secret's value with it), `secret` (the request carried a secret's placeholder where it may
 * not go, or a revoked or unknown one: secret-relay.ts).
 */
export type GatewayRefusal =
  | "sni-mismatch"
  | "host-sni-mismatch"
  | "upstream-tls"
  | "refused-address"
  | "unreachable"
  | "method"
  | "secret";

/** A session's network, as SandboxOptions.network takes it. */
export type NetworkOptions =
  | { mode: "none" }
  | {
      mode: "allowlist";
      /** The rules, strictest first is not required: deny beats ask beats allow. */
      rules: NetworkRule[];
      /**
       * Engine networks the gateway is attached to for its way out. Default ["bridge"]. Tests put
       * their test hosts' networks here (their names then resolve through Docker's DNS).
       */
      egressNetworks?: string[];
      /**
       * A PEM file of extra CA certificates (at most 64 KiB, no key) the gateway trusts for the
       * origins it connects to, besides the system's (a private registry's CA). The sandbox never
       * sees it: the gateway opens each TLS tunnel to check the requests inside, and the sandbox
       * trusts only the session's own CA, whose certificate is mounted read-only at
       * /etc/warden/ca-bundle.pem (SSL_CERT_FILE, PIP_CERT, REQUESTS_CA_BUNDLE, CURL_CA_BUNDLE,
       * GIT_SSL_CAINFO and NODE_EXTRA_CA_CERTS point at it) and whose key stays in the gateway.
       */
      caBundlePath?: string;
      /**
       * Set by validation (resolveNetworkOptions): the SHA-256 of caBundlePath's content, part of
       * the warm pool's key, so a spare started before the file changed is not handed out. Any
       * value given is replaced (or dropped without caBundlePath).
       */
      caBundleSha256?: string;
      /**
       * IPv4 addresses of the DNS servers the gateway resolves names with (Docker's `HostConfig.Dns`
       * of the gateway container, which the engine's embedded DNS forwards to). Default: the
       * engine's own (the host's resolvers). The sandbox never talks to them.
       */
      resolvers?: string[];
      /**
       * Receives one audit record per connection through the gateway, at most `auditLimit` of them;
       * the records over it are counted and reported to `onAuditDropped` instead.
       */
      onConnection?: (record: ConnectionAudit) => void;
      /**
       * The session's bound on audit records: `recordsPerSecond` on average, `burst` at once.
       * Default DEFAULT_AUDIT_LIMIT (10 per second, bursts of 200), so a sandbox that opens and
       * abandons connections in a loop cannot fill the host's disk with audit lines.
       */
      auditLimit?: AuditLimit;
      /**
       * Receives, once per window (one second after the first record over the bound, and when the
       * gateway is detached), how many records were dropped, by decision, and why.
       */
      onAuditDropped?: (summary: AuditDropSummary) => void;
      /**
       * Asked for each connection to a domain under an `ask` rule while the connection waits (the
       * gateway holds it). `allow-session` also lets later connections to exactly that host and
       * port through without asking. Without it, `ask` is `deny` (the non-interactive answer).
       * src/policy's networkApprover adapts an ApprovalProvider to it.
       */
      approve?: (request: NetworkApprovalRequest) => Promise<NetworkApprovalAnswer>;
      /** How long `approve` may take before the connection is refused. Default 300000 (5 minutes). */
      approvalTimeoutMs?: number;
      /**
       * Secrets the sandbox sees only as placeholders (`{{NAME}}`, docs/secrets.md): the gateway
       * replaces a placeholder with the value in the headers a binding names, on requests to the
       * bound hosts only, and refuses any other request that carries one.
       */
      secrets?: SessionSecret[];
      /** Receives one record per request that carried a placeholder: replaced (`use`) or refused. */
      onSecretUse?: (record: SecretUseAudit) => void;
    };

/**
 * One request through the gateway that carried a secret's placeholder: `use` (the placeholder was
 * replaced by the value) or `refuse` (an attempted leak, a revoked or unknown secret). Names only,
 * never a value; `path` without its query.
 */
export interface SecretUseAudit {
  sessionId: string;
  /** When the controller decided (ISO-8601). */
  time: string;
  secrets: string[];
  decision: "use" | "refuse";
  reason?: SecretRefusal;
  host: string;
  port: number;
  method: string;
  path: string;
}

/**
 * An approver's answer to one connection under an `ask` rule. `non-interactive`: nobody could be
 * asked after all (an MCP client without elicitation); refused like `deny`, audited as
 * `non-interactive` like a session without an approver.
 */
export type NetworkApprovalAnswer = "allow-once" | "allow-session" | "deny" | "non-interactive";

/** One connection waiting for approval: the session, the host and port it asked for, and the rule. */
export interface NetworkApprovalRequest {
  sessionId: string;
  host: string;
  port: number;
  /** The `ask` rule that matched, as audit lines name it (`ask pypi.org:443`). */
  rule: string;
  /** Fires when the answer is no longer wanted (timeout, session closed); answer deny then. */
  signal: AbortSignal;
}

/**
 * How a question under an `ask` rule was answered: `once` / `session` (the approver allowed it),
 * `cached` (allowed earlier for the session, not asked again), `denied` (the approver said no),
 * `timeout` (no answer within approvalTimeoutMs), `non-interactive` (nobody to ask), `closed`
 * (the session ended first); from the gateway itself: `no-controller` (its line to warden is
 * gone), `gateway-timeout` (its own backstop), `no-relay`, `bad-question`.
 */
export type AskOutcome =
  | "once"
  | "session"
  | "cached"
  | "denied"
  | "timeout"
  | "non-interactive"
  | "closed"
  | "no-controller"
  | "gateway-timeout"
  | "no-relay"
  | "bad-question";

/** The bound: records per second kept on average, and how many may come at once. */
export interface AuditLimit {
  /** Records per second let through once the burst is spent. Default 10 (DEFAULT_AUDIT_LIMIT, audit-limit.ts). */
  recordsPerSecond: number;
  /** Records let through at once, before the rate applies. Default 200. */
  burst: number;
}

/**
 * Records of one session not written in one window because they were over the bound. `reason` is
 * always `rate-limit`; `decisions` counts the dropped records by their decision; `from` / `to` are
 * the times (ISO-8601) the first and last of them were seen.
 */
export interface AuditDropSummary {
  sessionId: string;
  reason: "rate-limit";
  dropped: number;
  /** Connection records by their decision; secret-use records as `use` / `refuse`. */
  decisions: Partial<Record<ConnectionAudit["decision"] | SecretUseAudit["decision"], number>>;
  from: string;
  to: string;
  limit: AuditLimit;
}

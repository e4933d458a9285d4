/**
 * The CLI's stderr line about a request that carried a secret's placeholder (NetworkOptions.onSecretUse):
 * names only, never a value (SecretUseAudit holds none).
 */
import type { SecretUseAudit } from "../../egress/index.js";
import { terminalSafeLine } from "../../util/index.js";

/**
 * One stderr line for a secret-use record, e.g. `warden: secret use GITHUB_TOKEN GET
 * api.github.com:443/repos/acme/x` or `warden: secret refuse GITHUB_TOKEN POST evil.example:443/upload
 * reason=unbound`. The host and path come from the sandbox: shown as one terminal-safe line.
 */
export function secretUseLine(r: SecretUseAudit): string {
  const reason = r.reason ? ` reason=${r.reason}` : "";
  const text = `warden: secret ${r.decision} ${r.secrets.join(",")} ${r.method} ${r.host}:${r.port}${r.path}${reason}`;
  return `${terminalSafeLine(text)}\n`;
}

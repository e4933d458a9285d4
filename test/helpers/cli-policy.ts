/** The stderr lines the CLI's policy choice prints (src/cli/flags/policy-choice.ts), written out. */
import { fileURLToPath } from "node:url";

/** The shipped default policy file of this checkout, absolute. */
export const DEFAULT_POLICY_PATH = fileURLToPath(new URL("../../policies/default.yaml", import.meta.url));

/** What exec, run, replay and mcp say on stderr without `--policy`. */
export const DEFAULT_POLICY_NOTICE =
  `warden: policy: the default, ${DEFAULT_POLICY_PATH} (secrets and rm denied; workspace reads, copy-mode edits ` +
  "and common read-only and build/test commands allowed; anything else asks); choose another with --policy FILE, " +
  "or allow every call with --policy allow-all\n";

/** What they say with `--policy allow-all`. */
export const ALLOW_ALL_NOTICE =
  "warden: policy: allow-all (--policy allow-all): every tool call is allowed, none is checked\n";

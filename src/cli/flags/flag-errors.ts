/**
 * The CLI's one table from library option fields to the flags that set them, applied where every
 * command's error is printed (src/cli/main.ts): an InvalidArgumentError or NotFoundError about
 * `limits.memoryBytes` reads `--memory …` on the command line, since the user typed the flag, not
 * the field. Errors without a field, or about a field no flag sets, pass unchanged.
 */
import { InvalidArgumentError, NotFoundError } from "../../errors.js";

/** Option field (array indices dropped) → the flag of `warden exec`, `replay`, `run` and `mcp` that sets it. */
const FLAG_OF_FIELD: Readonly<Record<string, string>> = {
  "limits.cpus": "--cpus",
  "limits.memoryBytes": "--memory",
  "limits.pids": "--pids",
  "limits.tmpBytes": "--tmp-size",
  "limits.workspaceBytes": "--workspace-size",
  tenant: "--tenant",
  image: "--image",
  runtime: "--runtime",
  "workspace.hostPath": "--workspace",
  "workspace.mode": "--mode",
  "workspace.exclude": "--exclude",
  "network.caBundlePath": "--net-ca-bundle",
  "network.egressNetworks": "--egress-network",
};

/** `err` worded with the flag instead of the option field (see module doc); anything else as it is. */
export function inFlagTerms(err: unknown): unknown {
  if (!(err instanceof InvalidArgumentError || err instanceof NotFoundError)) return err;
  if (err.field === undefined || err.problem === undefined) return err;
  const flag = FLAG_OF_FIELD[err.field.replace(/\[\d+\]/g, "")];
  if (!flag) return err;
  const worded = { field: flag, problem: err.problem };
  const mapped = err instanceof NotFoundError ? new NotFoundError(worded) : new InvalidArgumentError(worded);
  mapped.cause = err;
  return mapped;
}

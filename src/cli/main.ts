/**
 * The `warden` command line. Exit codes: 0 success, 1 a tool call returned an error result
 * (or a check failed), 2 usage, configuration or engine errors.
 */
import { Command, CommanderError } from "commander";
import { WardenApiError } from "../client/index.js";
import { WardenError } from "../errors.js";
import { commands } from "./commands/index.js";
import { inFlagTerms } from "./flags/flag-errors.js";
import { WARDEN_VERSION } from "./version.js";

const program = new Command("warden")
  .description("Sandboxed, containerized execution runtime for AI agents' tool calls")
  .version(WARDEN_VERSION, "-V, --version", "print warden's version")
  .showHelpAfterError()
  .exitOverride();

for (const register of commands) register(program);

try {
  await program.parseAsync(process.argv);
} catch (thrown) {
  if (thrown instanceof CommanderError) process.exit(thrown.exitCode === 0 ? 0 : 2);
  // A library error about an option field is shown with the flag that set it (--memory, not limits.memoryBytes).
  const err = inFlagTerms(thrown);
  // A server's error (`warden attach`) is shown as the server's own: code and message.
  const message =
    err instanceof WardenError || err instanceof WardenApiError ? `${err.code}: ${err.message}` : String(err);
  console.error(`warden: ${message}`);
  process.exit(2);
}

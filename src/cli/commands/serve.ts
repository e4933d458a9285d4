/**
 * `warden serve --config FILE [--host H] [--port N] [--on-exit keep|close]`: the multi-tenant HTTP
 * API (src/server). `warden serve --hash-key TOKEN` prints the SHA-256 to put in the config file.
 * src/server and the packages only it needs (OPTIONAL_FEATURES.server: fastify and the rest,
 * optional peer dependencies) load when the command runs; without them it exits 2 with
 * PACKAGE_MISSING and the install command.
 */
import { stat } from "node:fs/promises";
import type { Command } from "commander";
import { InvalidArgumentError } from "../../errors.js";
import { importOptional, lowerHelperThreads, OPTIONAL_FEATURES } from "../../util/index.js";

/** src/server, loaded on demand (rejects PackageMissingError without its optional packages). */
const loadServer = () => importOptional(OPTIONAL_FEATURES.server, () => import("../../server/index.js"));

interface ServeFlags {
  config?: string;
  host?: string;
  port?: string;
  onExit?: string;
  hashKey?: string;
}

/** Registers `warden serve`. */
export function registerServe(program: Command): void {
  program
    .command("serve")
    .description("Run the multi-tenant HTTP API that hosts sessions (see examples/server/)")
    .option("-c, --config <file>", "server config file (YAML or JSON)", process.env.WARDEN_SERVE_CONFIG)
    .option("--host <host>", "listen address (overrides the config)")
    .option("--port <port>", "listen port (overrides the config)")
    .option(
      "--on-exit <keep|close>",
      "on SIGTERM, SIGINT or SIGHUP keep live sessions for the next start, or close them",
      "keep",
    )
    .option("--hash-key <token>", "print the sha256 of an API key for the config file, then exit")
    .action(async (flags: ServeFlags) => {
      const { hashKey, runServe } = await loadServer();
      if (flags.hashKey !== undefined) {
        console.log(hashKey(flags.hashKey));
        return;
      }
      if (!flags.config) throw new InvalidArgumentError("--config is required (or set WARDEN_SERVE_CONFIG).");
      const port = flags.port === undefined ? undefined : Number(flags.port);
      if (port !== undefined && (!Number.isInteger(port) || port < 0 || port > 65535)) {
        throw new InvalidArgumentError(`--port must be 0-65535, got ${flags.port}.`);
      }
      if (flags.onExit !== "keep" && flags.onExit !== "close") {
        throw new InvalidArgumentError(`--on-exit must be keep or close, got ${flags.onExit}.`);
      }
      // This process is the server's own: V8's garbage-collection threads and libuv's pool yield to
      // the event loop that answers every tenant (util/thread-priority.ts; a library embedding
      // startServer keeps its threads as they are). libuv starts its pool's threads at the pool's
      // first job, each with its creator's nice, and Node 22+ loads modules without that pool: one
      // job first, so the pool's threads exist when they are lowered.
      await stat(process.cwd());
      lowerHelperThreads();
      await runServe({
        config: flags.config,
        ...(flags.host ? { host: flags.host } : {}),
        ...(port === undefined ? {} : { port }),
        onExit: flags.onExit,
      });
    });
}

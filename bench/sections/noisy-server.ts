/**
 * The server of the noisy-neighbour section, run as a child process (node:child_process `fork`):
 * `warden serve` in a process of its own, as it runs in production. In the bench's process its
 * event loop also ran tenant B's client (fetch, JSON) and the section's CPU sampling (every 100 ms,
 * /proc reads for each process in the tenants' containers, more of them under load): work a real
 * server does not do, which waited behind A's requests and was counted against the server.
 *
 * Protocol over the IPC channel: the parent sends `start` (the raw server config and the directory
 * it resolves against); the child answers `started` with the server's URL and starts measuring its
 * event loop's delay (monitorEventLoopDelay, 10 ms resolution). `loop-delay` answers the largest
 * delay since the last one (ms) and starts a new window. `stop` shuts the server down (its
 * sessions' containers removed) and answers `stopped`. When the channel closes the child stops
 * the server if it still runs, then exits. Its helper threads (V8's garbage collection, libuv's
 * pool) run at nice 19, as `warden serve`'s do (util/thread-priority.ts), unless
 * WARDEN_BENCH_NOISY_HELPER_NICE is 0.
 */
import { monitorEventLoopDelay } from "node:perf_hooks";
import { pathToFileURL } from "node:url";
import { openSandboxBackend } from "../../src/sandbox/index.js";
import { resolveServerConfig } from "../../src/server/config/index.js";
import { type RunningServer, startServer } from "../../src/server/server.js";
import { lowerHelperThreads } from "../../src/util/thread-priority.js";

/** Parent → server process messages. */
export type ToServer =
  | { type: "start"; config: Record<string, unknown>; dir: string }
  | { type: "loop-delay" }
  | { type: "stop" };

/** Server process → parent messages. */
export type FromServer =
  | { type: "started"; url: string }
  | { type: "loop-delay"; maxMs: number }
  | { type: "stopped" }
  | { type: "failed"; message: string };

/** The child's main: answers the parent's messages until it disconnects. */
function main(): void {
  // As `warden serve` does (src/cli/commands/serve.ts): the helper threads yield to the event loop
  // (WARDEN_BENCH_NOISY_HELPER_NICE=0 keeps them at the event loop's priority, to compare).
  if (process.env.WARDEN_BENCH_NOISY_HELPER_NICE !== "0") lowerHelperThreads();
  let server: RunningServer | undefined;
  const loopDelay = monitorEventLoopDelay({ resolution: 10 });
  const send = (message: FromServer) => process.send?.(message);
  process.on("message", (message: ToServer) => {
    if (message.type === "start") {
      let config: ReturnType<typeof resolveServerConfig>;
      try {
        config = resolveServerConfig(message.config, message.dir);
      } catch (err) {
        send({ type: "failed", message: String(err) });
        return;
      }
      openSandboxBackend({ kind: "docker" })
        .then((backend) => startServer({ config, backend, onExit: "close" }))
        .then(
          (started) => {
            server = started;
            loopDelay.enable();
            send({ type: "started", url: String(started.url) });
          },
          (err: unknown) => send({ type: "failed", message: String(err) }),
        );
    } else if (message.type === "loop-delay") {
      send({ type: "loop-delay", maxMs: loopDelay.max / 1e6 });
      loopDelay.reset();
    } else if (message.type === "stop") {
      void stop().then(
        () => send({ type: "stopped" }),
        (err: unknown) => send({ type: "failed", message: `shutdown: ${String(err)}` }),
      );
    }
  });
  const stop = async () => {
    const running = server;
    server = undefined;
    await running?.shutdown(0);
  };
  // A parent that went away without `stop` (it crashed, or was killed): the sessions' containers still go.
  process.on("disconnect", () => void stop().finally(() => process.exit(0)));
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) main();

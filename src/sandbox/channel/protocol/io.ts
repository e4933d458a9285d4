/**
 * The channel implementation of SandboxIO (../../io.ts): commands and file operations as requests
 * over one ChannelClient. No Docker here: the client needs only a byte transport, so a backend
 * that carries the stream another way (a Kubernetes pods/exec stream) uses this as it is.
 */
import type { SandboxIO } from "../../io.js";
import type { ShimRef } from "../../types.js";
import type { ChannelClient } from "./client.js";
import { channelExec } from "./exec.js";
import {
  channelListDirRaw,
  channelReadFile,
  channelRealpath,
  channelStat,
  channelWriteFile,
} from "./files.js";
import { channelKeep, channelSpawn } from "./procs.js";

/**
 * Runs one request's `use` on a channel: the same client each time, or one that replaces a lost
 * one (the Kubernetes PodChannel). `signal` is the request's.
 */
export type ChannelRunner = <T>(
  signal: AbortSignal | undefined,
  use: (client: ChannelClient) => Promise<T>,
) => Promise<T>;

/** SandboxIO over `client`; `close` closes the channel (pending requests reject SandboxNotRunningError). */
export function channelIO(client: ChannelClient): SandboxIO {
  return channelIOVia(
    (_signal, use) => use(client),
    () => client.close(),
  );
}

/**
 * SandboxIO whose every request goes through `run`; `close` is the IO's close. Once `procs.keep`
 * named shims, each client this IO has not used yet gets that `keep` before its first request, so
 * a channel that replaces a lost one (a Kubernetes reconnect) never sweeps the session's
 * background processes.
 */
export function channelIOVia(run: ChannelRunner, close: () => void): SandboxIO {
  let shims: ShimRef[] = [];
  const told = new WeakSet<ChannelClient>();
  const runKept: ChannelRunner = (signal, use) =>
    run(signal, async (c) => {
      if (shims.length > 0 && !told.has(c)) {
        await channelKeep(c, shims, signal ? { signal } : {});
        told.add(c);
      }
      return use(c);
    });
  return {
    kind: "channel",
    exec: (command, o) => runKept(o?.signal, (c) => channelExec(c, command, o)),
    readFile: (path, range, o) => runKept(o?.signal, (c) => channelReadFile(c, path, range, o)),
    writeFile: (path, data, o) => runKept(o?.signal, (c) => channelWriteFile(c, path, data, o)),
    stat: (path, o) => runKept(o?.signal, (c) => channelStat(c, path, o)),
    realpath: (path, o) => runKept(o?.signal, (c) => channelRealpath(c, path, o)),
    listDirRaw: (path, o) => runKept(o?.signal, (c) => channelListDirRaw(c, path, o)),
    procs: {
      spawn: async (request, o) => {
        const started = await runKept(o?.signal, (c) => channelSpawn(c, request, o));
        shims = [...shims, { pid: started.pid, startTime: started.startTime }];
        return started;
      },
      keep: (list, o) =>
        run(o?.signal, async (c) => {
          shims = list.map((s) => ({ pid: s.pid, startTime: s.startTime }));
          const result = await channelKeep(c, shims, o);
          told.add(c);
          return result;
        }),
    },
    close,
  };
}

/**
 * The channel implementation of SandboxIO (../../io.ts): commands and file operations as requests
 * over one ChannelClient. No Docker here: the client needs only a byte transport, so a backend
 * that carries the stream another way (a Kubernetes pods/exec stream) uses this as it is.
 */
import type { SandboxIO } from "../../io.js";
import type { ChannelClient } from "./client.js";
import { channelExec } from "./exec.js";
import {
  channelListDirRaw,
  channelReadFile,
  channelRealpath,
  channelStat,
  channelWriteFile,
} from "./files.js";

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

/** SandboxIO whose every request goes through `run`; `close` is the IO's close. */
export function channelIOVia(run: ChannelRunner, close: () => void): SandboxIO {
  return {
    kind: "channel",
    exec: (command, o) => run(o?.signal, (c) => channelExec(c, command, o)),
    readFile: (path, range, o) => run(o?.signal, (c) => channelReadFile(c, path, range, o)),
    writeFile: (path, data, o) => run(o?.signal, (c) => channelWriteFile(c, path, data, o)),
    stat: (path, o) => run(o?.signal, (c) => channelStat(c, path, o)),
    realpath: (path, o) => run(o?.signal, (c) => channelRealpath(c, path, o)),
    listDirRaw: (path, o) => run(o?.signal, (c) => channelListDirRaw(c, path, o)),
    close,
  };
}

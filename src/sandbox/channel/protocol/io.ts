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

/** SandboxIO over `client`; `close` closes the channel (pending requests reject SandboxNotRunningError). */
export function channelIO(client: ChannelClient): SandboxIO {
  return {
    kind: "channel",
    exec: (command, options) => channelExec(client, command, options),
    readFile: (path, range, options) => channelReadFile(client, path, range, options),
    writeFile: (path, data, options) => channelWriteFile(client, path, data, options),
    stat: (path, options) => channelStat(client, path, options),
    realpath: (path, options) => channelRealpath(client, path, options),
    listDirRaw: (path, options) => channelListDirRaw(client, path, options),
    close: () => client.close(),
  };
}

/**
 * warden's exec channel: frames over one byte stream to warden-helper, carrying commands and file
 * operations without a docker exec per call. See images/sandbox/helper for the other end.
 *
 * - protocol/: the wire protocol and its client (frame codec, message bodies, ChannelClient,
 *   exec and file requests, the SandboxIO over them). No Docker: any byte transport carries it.
 * Engine-free: Docker's carriers are in ../docker/channel, Kubernetes' in ../kubernetes/transport.ts.
 */
export { ChannelClient } from "./protocol/client.js";
export { channelExec } from "./protocol/exec.js";
export {
  channelListDir,
  channelReadFile,
  channelRealpath,
  channelStat,
  channelUntar,
  channelWriteFile,
} from "./protocol/files.js";

export { channelIO } from "./protocol/io.js";
export {
  CONTENDED_BURST_MS,
  DEFAULT_CONTENDED_OUTPUT_BYTES_PER_SECOND,
  outputShare,
} from "./protocol/output-share.js";

/**
 * warden's exec channel: frames over one byte stream to warden-helper, carrying commands and file
 * operations without a docker exec per call. See images/sandbox/helper for the other end.
 *
 * - protocol/: the wire protocol and its client (frame codec, message bodies, ChannelClient,
 *   exec and file requests, the SandboxIO over them). No Docker: any byte transport carries it.
 * Engine-free: Docker's carriers are in ../docker/channel, Kubernetes' in ../kubernetes/transport.ts.
 */
export {
  ChannelClient,
  type ChannelClientOptions,
  type ChannelTransport,
  type RequestHandler,
} from "./protocol/client.js";
export { type ChannelExecTuning, channelExec } from "./protocol/exec.js";
export {
  channelListDir,
  channelReadFile,
  channelRealpath,
  channelStat,
  channelUntar,
  channelWriteFile,
  totalLinesFrom,
} from "./protocol/files.js";
export {
  decodeJsonData,
  encodeFrame,
  encodeJsonData,
  type Frame,
  FrameDecoder,
  FrameType,
} from "./protocol/frame.js";
export {
  type Heartbeat,
  type HeartbeatOptions,
  heartbeatDelayMs,
  startHeartbeat,
} from "./protocol/heartbeat.js";
export { channelIO } from "./protocol/io.js";
export {
  CONTENDED_BURST_MS,
  CONTENDED_LINGER_MS,
  DEFAULT_CONTENDED_OUTPUT_BYTES_PER_SECOND,
  OutputMeter,
  OutputShare,
  outputShare,
  type ShareMember,
} from "./protocol/output-share.js";

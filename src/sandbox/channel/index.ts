/**
 * warden's exec channel: frames over one byte stream to warden-helper, carrying commands and file
 * operations without a docker exec per call. See images/sandbox/helper for the other end.
 *
 * - protocol/: the wire protocol and its client (frame codec, message bodies, ChannelClient,
 *   exec and file requests, the SandboxIO over them). No Docker: any byte transport carries it.
 * - docker/: the transport on Docker (the helper container's attached stdio), the helper as the
 *   container's main process, its copy into other images, and the choice of exec path at start.
 */
export { attachedSocketTransport, attachHelper, type HelperLog } from "./docker/attach.js";
export { type ConnectChannelOptions, connectChannel, HelperUnavailableError } from "./docker/connect.js";
export { HELPER_PATH, withHelperMain } from "./docker/container.js";
export {
  FOREIGN_HELPER_DIR,
  FOREIGN_HELPER_PATH,
  HELPER_LABEL,
  helperArchive,
  helperPathInImage,
  installHelper,
  withForeignHelper,
} from "./docker/helper-binary.js";
export { warnChannelOnAttach } from "./docker/socket.js";
export {
  CHANNEL_SOCKET_DIR,
  DEFAULT_CHANNEL_BASE,
  isLocalEngine,
  isMissingBindSource,
  rememberSocketDir,
  removeSocketDir,
  socketDirFor,
  socketDirOf,
  sweepSocketDirs,
  takeRememberedSocketDir,
  withSocketDir,
} from "./docker/socket-dir.js";
export {
  applyHelperPlan,
  createHelperContainer,
  type ExecPath,
  execPathFromEnv,
  type HelperPlan,
  type HelperStart,
  planHelper,
  startWithHelper,
  warnHelperFallback,
} from "./docker/start-helper.js";
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

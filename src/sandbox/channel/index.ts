/**
 * warden's exec channel: frames over the helper container's attached stdio, carrying commands
 * and file operations without a docker exec per call. See images/sandbox/helper for the other end.
 */
export { attachedSocketTransport, attachHelper, type HelperLog } from "./attach.js";
export {
  ChannelClient,
  type ChannelClientOptions,
  type ChannelTransport,
  type RequestHandler,
} from "./client.js";
export { type ConnectChannelOptions, connectChannel, HelperUnavailableError } from "./connect.js";
export { HELPER_PATH, withHelperMain } from "./container.js";
export { type ChannelExecTuning, channelExec, commandArgv, commandEnv } from "./exec.js";
export {
  channelListDir,
  channelReadFile,
  channelRealpath,
  channelStat,
  channelUntar,
  channelWriteFile,
  totalLinesFrom,
} from "./files.js";
export { decodeJsonData, encodeFrame, encodeJsonData, type Frame, FrameDecoder, FrameType } from "./frame.js";
export {
  FOREIGN_HELPER_DIR,
  FOREIGN_HELPER_PATH,
  HELPER_LABEL,
  helperArchive,
  helperPathInImage,
  installHelper,
  withForeignHelper,
} from "./helper-binary.js";
export {
  applyHelperPlan,
  type ExecPath,
  execPathFromEnv,
  type HelperPlan,
  type HelperStart,
  planHelper,
  startWithHelper,
  warnHelperFallback,
} from "./start-helper.js";

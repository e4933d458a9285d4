/** The Docker carriers of the channel protocol: the helper in the container, the unix socket, the attach stream. */
export { attachedSocketTransport, attachHelper, type HelperLog } from "./attach.js";
export { type ConnectChannelOptions, connectChannel, HelperUnavailableError } from "./connect.js";
export { HELPER_PATH, withHelperMain } from "./container.js";
export {
  FOREIGN_HELPER_DIR,
  FOREIGN_HELPER_PATH,
  HELPER_LABEL,
  helperArchive,
  helperPathInImage,
  installHelper,
  withForeignHelper,
} from "./helper-binary.js";
export { warnChannelOnAttach } from "./socket.js";
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
} from "./socket-dir.js";
export {
  applyHelperPlan,
  createHelperContainer,
  type HelperPlan,
  type HelperStart,
  planHelper,
  startWithHelper,
  warnHelperFallback,
} from "./start-helper.js";

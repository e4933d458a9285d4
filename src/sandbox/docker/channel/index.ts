/** The Docker carriers of the channel protocol: the helper in the container, the unix socket, the attach stream. */

export { connectChannel } from "./connect.js";
export { withHelperMain } from "./container.js";
export {
  FOREIGN_HELPER_PATH,
  helperArchive,
  helperPathInImage,
  installHelper,
  withForeignHelper,
} from "./helper-binary.js";
export { warnChannelOnAttach } from "./socket.js";
export {
  CHANNEL_SOCKET_DIR,
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
  planHelper,
  startWithHelper,
  warnHelperFallback,
} from "./start-helper.js";

/**
 * Where the warden sandbox image installs warden-helper (images/sandbox/Dockerfile): the
 * container's main process and channel on Docker (attach), PID 1's idle init and the channel
 * process of a pods/exec stream on Kubernetes.
 */
export const HELPER_PATH = "/usr/local/bin/warden-helper";

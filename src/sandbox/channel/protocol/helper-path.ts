/**
 * Where the warden sandbox image installs warden-helper (images/sandbox/Dockerfile): the
 * container's main process and channel on Docker (attach), PID 1's idle init and the channel
 * process of a pods/exec stream on Kubernetes.
 */
export const HELPER_PATH = "/usr/local/bin/warden-helper";

/**
 * The image's second, execute-only copy (root owned, mode 0111; images/sandbox/Dockerfile): the
 * sandbox user cannot read it, so Linux makes a process that execs it non-dumpable at execve
 * (fs/exec.c would_dump), before its first instruction. The Kubernetes channel runs it where the
 * runtime can (runc); gVisor's loader refuses a file the caller cannot read.
 */
export const SEALED_HELPER_PATH = "/usr/local/libexec/warden/warden-helper";

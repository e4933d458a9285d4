/**
 * Where the warden sandbox image installs warden-helper (images/sandbox/Dockerfile): the
 * container's main process on every transport (Docker attach, Kubernetes Pod attach).
 */
export const HELPER_PATH = "/usr/local/bin/warden-helper";

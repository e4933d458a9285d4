/**
 * The hardened Pod of one Kubernetes sandbox (core/v1 Pod), built by a pure function so every
 * field is unit-tested. It mirrors the Docker container's hardening (../docker/hardening.ts): the
 * sandbox's own non-root uid:gid (../sandbox-uid.ts: also the fsGroup, so the emptyDirs are its), a read-only root filesystem, all capabilities dropped, no privilege
 * escalation, seccomp RuntimeDefault, no service-account token and no service links, CPU and
 * memory limits, and size-limited memory-backed emptyDirs for /workspace, /tmp and HOME (/home/sandbox,
 * as large as /tmp: pip's user installs and npm's cache write there). The container's
 * process is `warden-helper --init`, an idle init with no stdin that writes nothing (the CRI
 * runtime logs a container's stdout and stderr to the node's disk); the channel is a separate
 * `warden-helper --channel` that the exec API starts (transport.ts). Its termination message file
 * is out of the sandbox's reach (TERMINATION_MESSAGE_PATH).
 *
 * What the Pod spec cannot say: a per-container pids limit. Kubernetes caps processes per Pod
 * only through the kubelet's `podPidsLimit` (node configuration); the requested value is kept
 * in the `io.warden.pids` annotation, and docs/kubernetes.md says which limit applies.
 */
import type { V1Pod } from "@kubernetes/client-node";
import { HELPER_PATH } from "../channel/protocol/helper-path.js";
import { BASE_ENV, SANDBOX_HOME } from "../io-contract.js";
import { cgroupMemoryBytes } from "../limits.js";
import { parseSandboxUid, requireNonRootUid, UID_LABEL } from "../sandbox-uid.js";
import type { SandboxLimits } from "../types.js";
import { WORKSPACE_DIR } from "../types.js";
import { type PodState, podAnnotations, podLabels } from "./pod-labels.js";

/**
 * The container's terminationMessagePath: a file in a directory of the image that is root's with
 * mode 0700 (images/sandbox/Dockerfile, helper version 7). The kubelet bind-mounts a file of the
 * node's own disk (mode 0666) there, and at Kubernetes' default, /dev/termination-log, any process
 * of the sandbox could write it (before helper version 4, 1 GiB; then up to the file-size cap,
 * images/sandbox/helper/fsize.go). The sandbox's uid is never 0 and has no capability, so it can
 * neither traverse the directory nor chmod it; the kubelet and the runtime mount as root.
 */
const TERMINATION_MESSAGE_PATH = "/var/lib/warden/termination/log";

/** Name of the one container in every sandbox Pod. */
export const SANDBOX_CONTAINER = "sandbox";

/**
 * The container's process: warden-helper's idle init (images/sandbox/helper/idle.go, version 3):
 * PID 1, reaps orphans, holds no channel. (A helper of version 2 given this argument runs its
 * Docker PID-1 mode on a closed stdin, serving nothing; connectHelper refuses it by version.)
 */
const INIT_COMMAND = [HELPER_PATH, "--init"];

/** Inputs of buildPodSpec. */
export interface PodSpecOptions {
  /** Pod name (a DNS label: podName() makes one from a session id). */
  name: string;
  namespace: string;
  image: string;
  /** Default IfNotPresent; `Never` for images imported into the node (tests). */
  imagePullPolicy?: "Always" | "IfNotPresent" | "Never";
  limits: SandboxLimits;
  /** RuntimeClass (e.g. `gvisor`); none: the node's default runtime. */
  runtimeClassName?: string;
  /** What the labels and annotations carry (tenant, session, controller, pool key, times). */
  state: PodState;
  /** The host uid (= gid, fsGroup) the Pod's processes run as (../sandbox-uid.ts); never 0. Also its UID_LABEL. */
  uid: number;
}

/**
 * What every sandbox Pod requests of its node: 10m CPU and 32 MiB, small so that idle sessions
 * pack onto a node. The scheduler places a Pod only where the node's allocatable CPU and memory
 * still cover these beside the other Pods' requests (on a 2-CPU node, 200 Pods by CPU).
 */
export const POD_REQUESTS = { cpu: "10m", memory: String(32 * 1024 * 1024) } as const;

/** The Pod's CPU limit as a Kubernetes quantity in millicores (1.5 CPUs → "1500m"); at least 1m. */
export function cpuQuantity(cpus: number): string {
  return `${Math.max(1, Math.round(cpus * 1000))}m`;
}

/**
 * The Pod for `options`. Requests are POD_REQUESTS (10m CPU, 32 MiB) so idle sessions pack onto
 * a node; the limits cap what a session may use (memory includes its tmpfs areas, as with
 * Docker: cgroupMemoryBytes in copy mode).
 */
export function buildPodSpec(options: PodSpecOptions): V1Pod {
  const { limits } = options;
  const uid = requireNonRootUid(options.uid);
  const memory = String(cgroupMemoryBytes(limits, "copy"));
  return {
    apiVersion: "v1",
    kind: "Pod",
    metadata: {
      name: options.name,
      namespace: options.namespace,
      labels: { ...podLabels(options.state), [UID_LABEL]: String(uid) },
      annotations: { ...podAnnotations(options.state, limits), [UID_LABEL]: String(uid) },
    },
    spec: {
      restartPolicy: "Never",
      automountServiceAccountToken: false,
      enableServiceLinks: false,
      hostNetwork: false,
      hostPID: false,
      hostIPC: false,
      terminationGracePeriodSeconds: 0,
      ...(options.runtimeClassName ? { runtimeClassName: options.runtimeClassName } : {}),
      securityContext: {
        runAsNonRoot: true,
        runAsUser: uid,
        runAsGroup: uid,
        fsGroup: uid,
        seccompProfile: { type: "RuntimeDefault" },
      },
      containers: [
        {
          name: SANDBOX_CONTAINER,
          image: options.image,
          imagePullPolicy: options.imagePullPolicy ?? "IfNotPresent",
          command: INIT_COMMAND,
          args: [],
          stdin: false,
          tty: false,
          workingDir: WORKSPACE_DIR,
          terminationMessagePath: TERMINATION_MESSAGE_PATH,
          terminationMessagePolicy: "File",
          env: BASE_ENV.map((kv) => {
            const at = kv.indexOf("=");
            return { name: kv.slice(0, at), value: kv.slice(at + 1) };
          }),
          securityContext: {
            runAsNonRoot: true,
            runAsUser: uid,
            runAsGroup: uid,
            privileged: false,
            allowPrivilegeEscalation: false,
            readOnlyRootFilesystem: true,
            capabilities: { drop: ["ALL"] },
            seccompProfile: { type: "RuntimeDefault" },
          },
          resources: {
            limits: { cpu: cpuQuantity(limits.cpus), memory },
            requests: { ...POD_REQUESTS },
          },
          volumeMounts: [
            { name: "workspace", mountPath: WORKSPACE_DIR },
            { name: "tmp", mountPath: "/tmp" },
            { name: "home", mountPath: SANDBOX_HOME },
          ],
        },
      ],
      volumes: [
        { name: "workspace", emptyDir: { medium: "Memory", sizeLimit: String(limits.workspaceBytes) } },
        { name: "tmp", emptyDir: { medium: "Memory", sizeLimit: String(limits.tmpBytes) } },
        { name: "home", emptyDir: { medium: "Memory", sizeLimit: String(limits.tmpBytes) } },
      ],
    },
  };
}

/**
 * The uid the sandbox container of `pod` runs as (its securityContext's runAsUser, else the Pod's):
 * what adoption records. Throws InvalidArgumentError when there is none or it is 0.
 */
export function podUidOf(pod: V1Pod): number {
  const container = pod.spec?.containers.find((c) => c.name === SANDBOX_CONTAINER);
  const uid = container?.securityContext?.runAsUser ?? pod.spec?.securityContext?.runAsUser;
  return parseSandboxUid(uid === undefined ? undefined : String(uid), `Pod ${pod.metadata?.name ?? "?"}`);
}

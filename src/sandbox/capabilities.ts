/**
 * What every backend owes its callers (backend.ts): a SandboxSpec asking for more than the
 * backend's capabilities is refused with InvalidArgumentError, never silently given less. This is
 * the memory backend's check; Kubernetes refuses the same specs with its own messages
 * (kubernetes/create.ts requirePodOptions), and Docker has every capability.
 */
import { InvalidArgumentError } from "../errors.js";
import type { BackendCapabilities } from "./backend.js";
import type { SandboxSpec } from "./types.js";

/** Throws InvalidArgumentError naming the first field of `spec` that `capabilities` (of backend `kind`) lacks. */
export function refuseBeyondCapabilities(
  kind: string,
  capabilities: BackendCapabilities,
  spec: SandboxSpec,
): void {
  const refuse = (field: string, value: unknown, offered: readonly string[]) => {
    throw new InvalidArgumentError({
      field,
      problem: `the ${kind} backend offers ${offered.map((v) => JSON.stringify(v)).join(", ") || "none"}, got ${JSON.stringify(value)}; ask for one of those or use a backend that has it.`,
    });
  };
  const mode = spec.workspace?.mode ?? "copy";
  if (spec.workspace && !capabilities.workspaceModes.includes(mode))
    refuse("workspace.mode", mode, capabilities.workspaceModes);
  if (spec.mounts?.length && !capabilities.mounts) refuse("mounts", spec.mounts.length, []);
  const network = spec.network?.mode ?? "none";
  if (!capabilities.networkModes.includes(network))
    refuse("network.mode", network, capabilities.networkModes);
  if (spec.runtime !== undefined && !capabilities.runtimes.includes(spec.runtime))
    refuse("runtime", spec.runtime, capabilities.runtimes);
  if (spec.execPath !== undefined && !capabilities.execPaths.includes(spec.execPath))
    refuse("execPath", spec.execPath, capabilities.execPaths);
}

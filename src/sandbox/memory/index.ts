/** Placeholder of the in-memory SandboxBackend (issue 38, wt-conf replaces it). */
import { SandboxError } from "../../errors.js";
import type { BackendOptions, SandboxBackend } from "../backend.js";

/** The in-memory SandboxBackend. */
export function memoryBackend(_options: BackendOptions): SandboxBackend {
  throw new SandboxError("the memory SandboxBackend is not written yet");
}

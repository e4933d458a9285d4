/**
 * The memory backend: sandboxes held in this process's memory, no engine, no process ever run
 * (memory-backend.ts). Registered as `memory` in ../backends.ts; unit tests build their sandboxes
 * on MemorySandbox (test/helpers/fake-sandbox.ts).
 */
export { memoryBackend } from "./memory-backend.js";
export { MEMORY_COMMANDS } from "./memory-exec.js";
export { type MemoryNode, MemorySandbox } from "./memory-sandbox.js";

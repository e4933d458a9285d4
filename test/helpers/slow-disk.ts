/**
 * A slow, watched node:fs for spill tests (issue 11), for a `vi.mock("node:fs", …)` factory:
 * `writev` waits `disk.delayMs` before each write (a busy disk) and counts the bytes written in
 * `disk.writtenBytes`; `writeSync` is a spy (a write on the event loop). Takes the real module.
 */
import { vi } from "vitest";

/** What the slow disk reports and how slow it is. */
export interface SlowDisk {
  writtenBytes: number;
  delayMs: number;
}

/** `fs` with writev slowed and counted, and writeSync spied (see the file comment). */
export function slowDiskFs(fs: typeof import("node:fs"), disk: SlowDisk): typeof import("node:fs") {
  return {
    ...fs,
    writeSync: vi.fn(fs.writeSync),
    writev: vi.fn(
      (fd: number, chunks: Buffer[], position: number, cb: (e: Error | null, n: number) => void) =>
        setTimeout(
          () =>
            fs.writev(fd, chunks, position, (err, n) => {
              disk.writtenBytes += n ?? 0;
              cb(err, n);
            }),
          disk.delayMs,
        ),
    ),
  } as unknown as typeof import("node:fs");
}

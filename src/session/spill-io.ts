/** The file I/O of a spill writer (spill-store.ts), each call on libuv's thread pool, off the event loop. */
import { open as fsOpen, writev as fsWritev } from "node:fs";

/** `chunks` without their first `skip` bytes (after a short write). */
export function remainder(chunks: Buffer[], skip: number): Buffer[] {
  const out: Buffer[] = [];
  let left = skip;
  for (const c of chunks) {
    if (left >= c.length) left -= c.length;
    else {
      out.push(left > 0 ? c.subarray(left) : c);
      left = 0;
    }
  }
  return out;
}

/** Creates `path` (0600; never an existing file or link) on libuv's thread pool, off the event loop. */
export function openNew(path: string): Promise<number> {
  return new Promise((resolve, reject) => {
    fsOpen(path, "wx", 0o600, (err, fd) => (err ? reject(err) : resolve(fd)));
  });
}

/** fs.writev at a position, as a promise. */
export function writev(fd: number, chunks: Buffer[], position: number): Promise<number> {
  return new Promise((resolve, reject) => {
    fsWritev(fd, chunks, position, (err, bytesWritten) => (err ? reject(err) : resolve(bytesWritten)));
  });
}

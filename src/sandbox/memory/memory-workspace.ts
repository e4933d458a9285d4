/**
 * A copy-mode workspace read into a MemorySandbox: the host directory packed as for Docker's archive
 * API (workspace-copy.ts: links stay links, excluded entries left out, the host only read), then
 * unpacked into the tree. The packer's hashes become the sandbox's changedPaths baseline.
 */
import { Readable } from "node:stream";
import { extract } from "tar-stream";
import { WORKSPACE_DIR } from "../types.js";
import { packDirectory } from "../workspace-copy.js";
import type { ExcludePredicate } from "../workspace-exclude.js";
import type { MemorySandbox } from "./memory-sandbox.js";

/** Copies `hostDir` (less what `exclude` names) into `sandbox`'s /workspace. Rejects on a host read error. */
export async function copyWorkspaceIn(
  sandbox: MemorySandbox,
  hostDir: string,
  exclude?: ExcludePredicate,
): Promise<void> {
  const packed = packDirectory(hostDir, exclude ? { exclude } : {});
  const unpack = extract();
  const unpacked = (async () => {
    for await (const entry of unpack) {
      const { name, type, mode, mtime, linkname } = entry.header;
      const path = `${WORKSPACE_DIR}/${name.replace(/\/$/, "")}`;
      const chunks: Buffer[] = [];
      for await (const chunk of entry) chunks.push(chunk as Buffer);
      if (type === "directory") sandbox.mkdir(path);
      else if (type === "symlink") sandbox.symlink(path, linkname ?? "");
      else if (type === "file")
        sandbox.file(path, Buffer.concat(chunks), (mode ?? 0o644) & 0o777, mtime?.getTime());
    }
  })();
  Readable.from(packed.stream).pipe(unpack as unknown as NodeJS.WritableStream);
  await Promise.all([packed.done, unpacked]);
  sandbox.baseline = new Map(packed.hashes);
}

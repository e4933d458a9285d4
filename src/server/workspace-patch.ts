/**
 * The unified patch of a session's workspace changes: for each path `changedPaths()` reports, the
 * original text (from the host directory the workspace was copied from, when there is one) against
 * the current text read through the sandbox, rendered with the `diff` package (`a/` and `b/` prefixes,
 * /dev/null for added and deleted files, as git does). Files over `maxFileBytes` or with NUL bytes get
 * a "Binary files … differ" line instead of hunks.
 */
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { createTwoFilesPatch } from "diff";
import type { Sandbox } from "../sandbox/types.js";
import { WORKSPACE_DIR } from "../sandbox/types.js";

const DEFAULT_MAX_FILE_BYTES = 1024 * 1024;

async function original(
  hostRoot: string | undefined,
  path: string,
  maxBytes: number,
): Promise<Buffer | null> {
  if (!hostRoot) return null;
  try {
    const data = await readFile(join(hostRoot, path));
    return data.length > maxBytes ? Buffer.alloc(maxBytes + 1) : data;
  } catch {
    return null;
  }
}

async function current(
  sandbox: Sandbox,
  path: string,
  maxBytes: number,
  signal?: AbortSignal,
): Promise<Buffer> {
  const res = await sandbox.readFile(
    `${WORKSPACE_DIR}/${path}`,
    { kind: "bytes", offset: 0, length: maxBytes + 1 },
    signal ? { signal } : {},
  );
  return res.totalBytes > maxBytes ? Buffer.alloc(maxBytes + 1) : res.data;
}

function isBinary(data: Buffer | null, maxBytes: number): boolean {
  return data !== null && (data.length > maxBytes || data.includes(0));
}

/** Builds the patch text ("" when nothing changed). */
export async function workspacePatch(
  sandbox: Sandbox,
  hostRoot: string | undefined,
  options: { signal?: AbortSignal; maxFileBytes?: number } = {},
): Promise<string> {
  const maxBytes = options.maxFileBytes ?? DEFAULT_MAX_FILE_BYTES;
  const changes = await sandbox.changedPaths(options.signal ? { signal: options.signal } : {});
  const parts: string[] = [];
  for (const change of changes) {
    const rel = change.path.replace(/^\/workspace\/?/, "").replace(/^\/+/, "");
    const before = change.kind === "added" ? null : await original(hostRoot, rel, maxBytes);
    const after = change.kind === "deleted" ? null : await current(sandbox, rel, maxBytes, options.signal);
    const oldName = change.kind === "added" ? "/dev/null" : `a/${rel}`;
    const newName = change.kind === "deleted" ? "/dev/null" : `b/${rel}`;
    if (isBinary(before, maxBytes) || isBinary(after, maxBytes)) {
      parts.push(`diff --git a/${rel} b/${rel}\nBinary files ${oldName} and ${newName} differ\n`);
      continue;
    }
    const patch = createTwoFilesPatch(
      oldName,
      newName,
      before?.toString("utf8") ?? "",
      after?.toString("utf8") ?? "",
      undefined,
      undefined,
      { context: 3 },
    );
    // Drop the "Index:"/"====" preamble the diff package writes; keep the ---/+++ headers and hunks.
    parts.push(`diff --git a/${rel} b/${rel}\n${patch.slice(patch.indexOf("--- "))}`);
  }
  return parts.join("");
}

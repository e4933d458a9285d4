/**
 * The write tool: Pi's `write {path, content}` (coding-agent write.ts, see
 * shared/reference/pi-tool-semantics.md): creates parent directories and overwrites the file as UTF-8.
 * Unlike Pi: the path is confined (a symlink whose target lies outside the workspace and mounts is
 * refused, naming the resolved target; CVE-2025-53109), and the write is atomic (temp file + rename,
 * through Sandbox.writeFile), so a reader never sees a half-written file.
 */
import { Type } from "typebox";
import { InvalidArgumentError } from "../errors.js";
import { omitUndefined } from "../util/index.js";
import { statToolPath } from "./paths.js";
import type { Tool } from "./types.js";

const writeSchema = Type.Object({
  path: Type.String({ description: "Path to the file to write (relative or absolute)" }),
  content: Type.String({ description: "Content to write to the file" }),
});

/** Details of a write, for UIs and logs. */
export interface WriteToolDetails {
  /** Canonical path written inside the sandbox. */
  path: string;
  /** Bytes written (UTF-8). */
  bytes: number;
}

/**
 * Creates the write tool. Errors: PathOutsideWorkspaceError (canonical target outside the roots),
 * InvalidArgumentError (the path is a directory), and the sandbox's write errors.
 */
export function createWriteTool(): Tool<typeof writeSchema, WriteToolDetails> {
  return {
    name: "write",
    label: "write",
    description:
      "Write content to a file. Creates the file if it doesn't exist, overwrites if it does. " +
      "Automatically creates parent directories.",
    parameters: writeSchema,
    mutatesPath: (args) => args.path,
    async execute(_toolCallId, args, ctx) {
      const { sandbox, signal } = ctx;
      const { canonical, stat } = await statToolPath(sandbox, args.path, signal);
      if (stat && stat.type !== "file") {
        throw new InvalidArgumentError(`${args.path} is a ${stat.type}; write replaces regular files only.`);
      }
      const data = Buffer.from(args.content, "utf8");
      await sandbox.writeFile(canonical, data, omitUndefined({ signal }));
      return {
        content: [{ type: "text", text: `Successfully wrote ${data.length} bytes to ${args.path}` }],
        details: { path: canonical, bytes: data.length },
      };
    },
  };
}

/**
 * The parts a policy judges in a bash script (bash/analyze.ts produces them), how a command is
 * shown, and how parts are judged after the script changes directory or shell state.
 */
import { posix } from "node:path";
import { ANY_TEXT, type ArgWord, type Found } from "../command-pattern.js";
import type { FormVerdict } from "../commands/grammar.js";
import {
  type ArgumentPath,
  CONTEXT_CHANGERS,
  changeDirectory,
  DIRECTORY_CHANGERS,
  inDirectories,
  WORKSPACE,
} from "./arguments.js";
import { type FdTable, type Resolved, resolveFdPath } from "./fds.js";
import { globEscape } from "./words.js";

/** A glob target that starts with ANY_TEXT is a path in any directory already. */
const ANY_TEXT_PREFIX = ANY_TEXT;

/** One thing in a script a policy must judge. `via` lists the wrappers unwrapped to reach it. */
export type BashPart =
  | {
      kind: "command";
      argv: ArgWord[];
      text: string;
      role: "command" | "wrapper";
      via: string[];
      /** What its form does under the command model (commands/model.ts); absent for commands it does not describe. */
      form?: FormVerdict;
      /** See `identity` of the argument kind. */
      identity: string | null;
      /**
       * The directory a wrapper runs it in (`env -C DIR cmd`, `git -C DIR`), relative to the script's working
       * directory, or null when that directory is not known; absent when it runs where the script does.
       */
      cwd?: string | null;
    }
  | { kind: "opaque"; text: string; why: string; via: string[] }
  /**
   * A file a redirection, or (`argument`) a command's own argument, writes or reads. `stream`: the
   * target is one of the command's streams (bash/fds.ts: `/dev/stdout` for a pipe or the tool
   * result, `/dev/null` for the tool's stdin), judged by that name and never resolved in the sandbox.
   */
  | { kind: "write" | "read"; target: string; text: string; via: string[]; argument?: true; stream?: true }
  /** A literal argument that may name a file the command reads (`cat .env`): deny/ask path rules only. */
  | {
      kind: "argument";
      /** The literal path, or when `glob` is set an absolute glob of every path the word may become. */
      target: string;
      /** The word expands (glob, brace, tilde, parameter, substitution): matched by path-overlap.ts. */
      glob?: boolean;
      /** Why a glob stands for any path (a git object tied to no path), for the reason. */
      why?: string;
      /** A path a listing printed (bash/listings.ts), with that listing's dot rule (match.ts). */
      found?: Found;
      /** The word as the script writes it, shown instead of the glob. */
      word?: string;
      /** As for `write` / `read`: a stream of the command, never resolved in the sandbox. */
      stream?: true;
      text: string;
      via: string[];
      /**
       * The command's argv values as a JSON array when they alone say what runs, else null: its
       * meaning then depends on the rest of the script (a word that is not literal or that the shell
       * expands, a variable assignment before it, stdin from a pipe, here-doc or input redirection, a
       * wrapper, or a script that changes directory or shell state). "Allow for this session" keys
       * a part on this identity, or on the whole command text when it is null (see evaluate.ts).
       */
      identity: string | null;
    };

/** Renders argv for display: literal words as themselves, others as written. */
export function renderArgv(argv: readonly ArgWord[]): string {
  return argv
    .map((w) =>
      w.value !== null && !w.expands
        ? /[\s"'\\$`]/.test(w.value)
          ? JSON.stringify(w.value)
          : w.value
        : (w.raw ?? "?"),
    )
    .join(" ");
}

/** Text of an opaque part, kept whole: "allow for this session" approvals are keyed on it. */
export function partText(text: string): string {
  return text.trim();
}

/** Where a part comes from: the text shown, the wrappers unwrapped to reach it. */
export interface PartOrigin {
  text: string;
  via: string[];
}

/**
 * The parts for a command's argument paths (bash/arguments.ts argumentPaths), with the command's
 * `identity`: a literal path as the descriptors `fds` make it (bash/fds.ts: a stream of the command,
 * the file a descriptor holds, or the path itself; opaque when that cannot be told), a glob as it is.
 * `moved` (FdContext.moved): the command runs in another directory than the script's.
 */
export function argumentParts(
  paths: readonly ArgumentPath[],
  fds: FdTable,
  origin: PartOrigin & { identity: string | null },
  moved = false,
): BashPart[] {
  return paths.map(({ target, glob, why, found, word }): BashPart => {
    const resolved: Resolved = glob ? { kind: "path", target } : resolveFdPath(fds, target, moved);
    if (resolved.kind === "opaque")
      return { kind: "opaque", text: partText(origin.text), why: resolved.why, via: origin.via };
    return {
      kind: "argument",
      target: resolved.target,
      ...origin,
      ...(glob ? { glob } : {}),
      ...(why ? { why } : {}),
      ...(found ? { found } : {}),
      ...(word !== undefined ? { word } : {}),
      ...(resolved.kind === "stream" ? { stream: true as const } : {}),
    };
  });
}

/**
 * The part for a file a command writes or reads (`argument`: named by its own argument): `target`
 * as the descriptors `fds` make it (a stream of the command, the file a descriptor holds, or the
 * path itself); opaque for a target that is not literal or whose descriptor cannot be told.
 * `moved` as for argumentParts.
 */
export function filePart(
  kind: "write" | "read",
  target: ArgWord,
  { text, via }: PartOrigin,
  fds: FdTable,
  argument?: true,
  moved = false,
): BashPart {
  if (target.value === null || target.expands) {
    const why = target.value === null ? "is not literal" : "may be expanded by the shell";
    return { kind: "opaque", text: partText(text), why: `the ${kind} target ${why}`, via };
  }
  const resolved = resolveFdPath(fds, target.value, moved);
  if (resolved.kind === "opaque") return { kind: "opaque", text: partText(text), why: resolved.why, via };
  return {
    kind,
    target: resolved.target,
    text,
    via,
    ...(argument ? { argument } : {}),
    ...(resolved.kind === "stream" ? { stream: true as const } : {}),
  };
}

/**
 * `parts` of a script judged where it runs them: after a `cd` a relative argument may be in any
 * directory the script may be in, and a relative redirection target is opaque; a `cd` to a
 * directory not known (not literal, `-`, `popd`) is opaque too; after any command
 * that changes shell state (CONTEXT_CHANGERS) no part's identity stands alone.
 */
export function inWorkingDirectories(parts: BashPart[]): BashPart[] {
  const names = new Set<string>();
  for (const p of parts) {
    const name = p.kind === "command" ? p.argv[0]?.value : undefined;
    if (name) names.add(name.slice(name.lastIndexOf("/") + 1));
  }
  const changesDir = [...DIRECTORY_CHANGERS].some((n) => names.has(n));
  const changesContext = changesDir || [...CONTEXT_CHANGERS].some((n) => names.has(n));
  if (!changesContext) return parts;
  let dirs: string[] | null = [WORKSPACE];
  return parts.flatMap((p): BashPart[] => {
    const name = p.kind === "command" ? (p.argv[0]?.value ?? "") : "";
    if (DIRECTORY_CHANGERS.has(name) && p.kind === "command") {
      const known = dirs !== null;
      dirs = changeDirectory(p.argv, dirs);
      // Where a `cd "$X"`, `cd -` or `popd` leads is not known: never allowed (the relative paths
      // after it are judged anywhere, below).
      if (known && dirs === null)
        return [
          { ...p, identity: null },
          {
            kind: "opaque",
            text: p.text,
            why: `${name}: the directory it leads to is not known here`,
            via: p.via,
          },
        ];
    }
    if (changesDir && p.kind === "argument") return inDirectories(p, dirs);
    if (changesDir && (p.kind === "write" || p.kind === "read") && !p.target.startsWith("/"))
      return [
        {
          kind: "opaque",
          text: p.text,
          why: `relative ${p.kind} target after a change of directory`,
          via: p.via,
        },
      ];
    return [p.kind === "command" || p.kind === "argument" ? { ...p, identity: null } : p];
  });
}

/**
 * `parts` of a wrapper's payload (bash/wrappers.ts `chdir`) judged in the directory `dir` it
 * runs them in (relative to the script's working directory), or in any directory when it is null
 * (not literal). Relative arguments and redirection targets
 * are joined to `dir`, so `env -C .git cat config` reads `.git/config`; a glob under /workspace is
 * judged both where it was and below `dir` (the word may have been absolute); for an unknown `dir`
 * a relative argument is any path ending in it and a relative redirection target is opaque, as
 * after a `cd` to an unknown directory. Command parts record the directory (`cwd`) for the
 * git-config check. The directory composes with a `cd` before the wrapper: inWorkingDirectories
 * runs after this, on the script's parts, and rebases what is still relative to /workspace.
 */
export function inDirectory(parts: BashPart[], dir: string | null): BashPart[] {
  const under = (path: string) => (path.startsWith("/") ? path : posix.join(dir ?? ".", path));
  return parts.flatMap((p): BashPart[] => {
    if (p.kind === "opaque") return [p];
    if (p.kind === "command") {
      const cwd = dir === null || p.cwd === null ? null : under(p.cwd ?? ".");
      return [{ ...p, identity: null, cwd }];
    }
    if (p.stream || p.target.startsWith(ANY_TEXT_PREFIX)) return [p];
    if (p.kind === "argument" && p.glob) {
      if (!p.target.startsWith(`${WORKSPACE}/`)) return [p];
      if (dir === null) return inDirectories(p, null);
      const base = posix.resolve(WORKSPACE, dir);
      const rebased = `${base === "/" ? "" : globEscape(base)}/${p.target.slice(WORKSPACE.length + 1)}`;
      return [p, { ...p, identity: null, target: rebased }];
    }
    if (p.target.startsWith("/")) return [p.kind === "argument" ? { ...p, identity: null } : p];
    if (dir !== null) {
      const target = under(p.target);
      return [p.kind === "argument" ? { ...p, identity: null, target } : { ...p, target }];
    }
    if (p.kind === "argument") return inDirectories(p, null);
    return [
      {
        kind: "opaque",
        text: p.text,
        why: `relative ${p.kind} target in a directory the wrapper names that is not known`,
        via: p.via,
      },
    ];
  });
}

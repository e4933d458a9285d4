/**
 * ls through Sandbox.listDirSorted (only the shown head of a listing reaches the tool, the rest
 * summarised) gives the same text and details, byte for byte, as the path before it: the whole
 * listing here, sorted (Array#sort, Pi's compare), cut at `limit`, and truncateHead of all its lines.
 */
import { posix } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { compareListingNames, type DirEntry, type Sandbox } from "../../../src/sandbox/index.js";
import { createSpillStore } from "../../../src/session/spill-store.js";
import { createLsTool, MAX_RESOLVED_SYMLINKS } from "../../../src/tools/ls.js";
import { bytesLimitNotice, countLimitNotice, ResultNotices } from "../../../src/tools/output-notice.js";
import { isWithinRoots } from "../../../src/tools/paths.js";
import { DEFAULT_MAX_BYTES, truncateHead } from "../../../src/truncate/index.js";
import { FakeSandbox } from "../../helpers/fake-sandbox.js";

const spill = createSpillStore({ sessionId: "ls-listing-unit" });

async function isDirectoryBefore(sandbox: Sandbox, dir: string, entry: DirEntry): Promise<boolean> {
  if (entry.type === "directory") return true;
  if (entry.type !== "symlink") return false;
  try {
    const target = await sandbox.realpath(posix.join(dir, entry.name));
    if (!isWithinRoots(target, sandbox.info.roots)) return false;
    return (await sandbox.stat(target))?.type === "directory";
  } catch {
    return false;
  }
}

/** The ls tool's output as computed before listDirSorted (the golden reference). */
async function lsBefore(sandbox: Sandbox, dir: string, limit: number) {
  const canonical = `/workspace/${dir}`;
  const entries = (await sandbox.listDir(canonical)).sort((a, b) => compareListingNames(a.name, b.name));
  const shown = entries.slice(0, limit);
  let links = 0;
  const isDir = await Promise.all(
    shown.map((entry) =>
      entry.type === "symlink" && links++ >= MAX_RESOLVED_SYMLINKS
        ? false
        : isDirectoryBefore(sandbox, canonical, entry),
    ),
  );
  const lines = shown.map((entry, i) => (isDir[i] ? `${entry.name}/` : entry.name));
  if (lines.length === 0)
    return { content: [{ type: "text", text: "(empty directory)" }], details: undefined };
  const truncation = truncateHead(lines.join("\n"), { maxLines: Number.MAX_SAFE_INTEGER });
  const notices = new ResultNotices<object>();
  if (entries.length > limit)
    notices.note(countLimitNotice(limit, "entries", false), { entryLimitReached: limit });
  if (truncation.truncated) notices.note(bytesLimitNotice(DEFAULT_MAX_BYTES), { truncation });
  return notices.output(truncation.content);
}

let sandbox: FakeSandbox;
const long = (prefix: string, i: number) => `${prefix}${String(i).padStart(4, "0")}-${"é".repeat(90)}`;

beforeAll(async () => {
  sandbox = await FakeSandbox.create();
  // mixed: case collisions, non-ASCII, newlines in names, directories, links in and out of the roots.
  for (let i = 0; i < 4000; i++) {
    const name = `${["Ä", "a", "B", "b"][i % 4]}${(i * 7919) % 4000}${i % 13 === 0 ? "\nx" : ""}`;
    if (i % 9 === 0) sandbox.mkdir(`mixed/${name}`);
    else if (i % 97 === 0) sandbox.symlink(`mixed/${name}`, i % 2 ? "/workspace/mixed" : "/etc");
    else await sandbox.put(`mixed/${name}`, "");
  }
  // The last shown entry: a link to a directory whose name ends in a newline; a file ending in one;
  // a directory ending in one. Long names, so the rest is summarised.
  for (const [dir, make] of [
    ["last-link", (p: string) => sandbox.symlink(p, "/workspace/last-link")],
    ["last-newline", (p: string) => sandbox.put(p, "")],
    ["last-dir", (p: string) => sandbox.mkdir(p)],
  ] as const) {
    for (let i = 0; i < 400; i++) await sandbox.put(`${dir}/${long("a", i)}`, "");
    for (let i = 0; i < 3; i++) await make(`${dir}/${long("z", i)}\n`);
  }
  // big: over the inline bound, so the listing is sorted in the worker pool.
  for (let i = 0; i < 30_000; i++)
    await sandbox.put(`big/${i % 2 ? "F" : "f"}ile-${(i * 7919) % 30_000}`, "");
  sandbox.mkdir("empty");
});

describe("ls through listDirSorted", () => {
  const cases: [string, number[]][] = [
    ["mixed", [1, 16, 500, 1500, 3999, 4000, 4001, 1_000_000]],
    ["last-link", [1, 400, 402, 403, 1_000_000]],
    ["last-newline", [403, 1_000_000]],
    ["last-dir", [403, 1_000_000]],
    ["big", [500, 29_999, 1_000_000]],
    ["empty", [1, 500]],
  ];
  for (const [dir, limits] of cases)
    it(`gives the text and details it gave before, byte for byte: ${dir}, limits ${limits.join(", ")}`, async () => {
      for (const limit of limits) {
        const now = await createLsTool().execute("c", { path: dir, limit }, { sandbox, spill });
        const before = await lsBefore(sandbox, dir, limit);
        expect(JSON.stringify(now), `${dir} limit ${limit}`).toBe(JSON.stringify(before));
      }
    });
});

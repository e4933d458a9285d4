/**
 * Every worker module src/ starts (workerModule(import.meta.url, NAME)) is a file beside its user
 * that exports runJob, so the build compiles it to dist/ beside the user's .js (tsconfig.build.json
 * takes all of src/) and a worker started from dist/ finds it.
 */
import { readdir, readFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { formatPatch } from "diff";
import { describe, expect, it } from "vitest";
import { formatHunks, hunkTextPool, PATCH_CONTEXT_LINES } from "../../../src/review/patch-hunks.js";
import { jsonBodyPool } from "../../../src/server/http/json-body.js";
import { editDiffPool, formatEditDiff } from "../../../src/tools/edit-diff.js";
import { diffJob, lineHunksOf } from "../../../src/util/line-diff.js";

const numbered = (n: number, tag: string) => Array.from({ length: n }, (_, i) => `${tag} ${i}\n`).join("");

describe("worker modules", () => {
  it("exist beside each user, named *-worker.ts, each exporting runJob", async () => {
    const started: string[] = [];
    const problems: string[] = [];
    for (const name of await readdir("src", { recursive: true })) {
      if (!name.endsWith(".ts")) continue;
      const text = await readFile(join("src", name), "utf8");
      for (const m of text.matchAll(/workerModule\(import\.meta\.url, "([^"]+)"\)/g)) {
        const path = join("src", dirname(name), `${m[1]}.ts`);
        started.push(path);
        const source = await readFile(path, "utf8").catch(() => "");
        if (!/-worker$/.test(m[1] ?? "")) problems.push(`${path}: not named *-worker`);
        if (!/^export (async )?function runJob\(/m.test(source)) problems.push(`${path}: no runJob export`);
      }
    }
    expect(problems).toEqual([]);
    expect(started.sort()).toEqual([
      "src/review/hunk-text-worker.ts",
      "src/review/patch-bytes-worker.ts",
      "src/sandbox/listing-worker.ts",
      "src/server/http/json-body-worker.ts",
      "src/server/http/result-json-worker.ts",
      "src/tools/edit-diff-worker.ts",
      "src/tools/image-decode-worker.ts",
      "src/util/line-diff-worker.ts",
    ]);
  });

  // The pools whose users fall back to this thread when the worker fails (so their own tests would
  // not notice a worker that cannot start): each answers here what the same code gives inline.
  it("answer under vitest, from the .ts sources, what the same functions give on this thread", async () => {
    const job = diffJob(numbered(3000, "old"), numbered(3000, "new").replace("new 7\n", "old 7\n"), 3);
    const hunks = lineHunksOf(job);
    expect(await hunkTextPool().run(diffJob(job.oldText, job.newText, PATCH_CONTEXT_LINES))).toEqual(
      formatHunks(lineHunksOf(diffJob(job.oldText, job.newText, PATCH_CONTEXT_LINES))),
    );
    expect(await editDiffPool().run({ path: "f.txt", diff: job })).toEqual(
      formatEditDiff("f.txt", job.oldText, job.newText, hunks, formatPatch),
    );
    const body = (text: string) => new Uint8Array(Buffer.from(text));
    expect(await jsonBodyPool().run(body('{"a":[1,"x"]}'))).toEqual({ value: { a: [1, "x"] } });
    expect(await jsonBodyPool().run(body('{"__proto__":{"x":1}}'))).toEqual({ invalid: true });
    expect(await jsonBodyPool().run(body("  \n"))).toEqual({ value: undefined });
  });
});

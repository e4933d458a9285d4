import { existsSync } from "node:fs";
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { docSnippet } from "../helpers/doc-snippets.js";
import { architectureViolations } from "./architecture-check.js";
import { DOCKER_CODE, LAYERS, type Layer } from "./architecture-layers.js";

// Cruising the whole of src/ takes a few seconds on a busy machine.
const CRUISE_MS = 60_000;

describe("architecture of src/", () => {
  it(
    "has no cycle, no import against the layer order, and reaches other folders through their index.ts",
    async () => {
      expect(await architectureViolations(process.cwd(), LAYERS)).toEqual([]);
    },
    CRUISE_MS,
  );

  it("README.md's layout tree (the one list for readers) names the layers' units in the same order", async () => {
    const tree = docSnippet("README.md", "layout-tree");
    // Top-level entries of the tree: two spaces, then `name/` or `name.ts`.
    const listed = [...tree.matchAll(/^ {2}([a-z-]+)(?:\/|\.ts) /gm)].map((m) => m[1]);
    expect(listed).toEqual(LAYERS.map((l) => l.unit));
  });

  it("README.md's layout tree names only files and folders that exist", () => {
    const missing: string[] = [];
    let parent = "";
    for (const m of docSnippet("README.md", "layout-tree").matchAll(/^( {2}| {4})([a-z-]+(?:\/|\.ts)) /gm)) {
      const indent = m[1] ?? "";
      const name = m[2] ?? "";
      const path = indent.length === 2 ? `src/${name}` : `src/${parent}${name}`;
      if (indent.length === 2) parent = name;
      if (!existsSync(path)) missing.push(path);
    }
    expect(missing).toEqual([]);
  });

  it("has no TypeScript file over 400 lines in src/ or test/ (AGENTS.md: small files)", async () => {
    const over: string[] = [];
    for (const root of ["src", "test"]) {
      for (const name of await readdir(root, { recursive: true })) {
        if (!name.endsWith(".ts")) continue;
        const lines = (await readFile(join(root, name), "utf8")).split("\n").length - 1;
        if (lines > 400) over.push(`${root}/${name}: ${lines} lines`);
      }
    }
    expect(over).toEqual([]);
  });
});

describe("the architecture check itself", () => {
  const dirs: string[] = [];
  afterAll(async () => {
    for (const d of dirs) await rm(d, { recursive: true, force: true });
  });

  const layers: Layer[] = [
    { unit: "low", reason: "test" },
    { unit: "mid", reason: "test" },
    { unit: "high", reason: "test" },
  ];

  /** A tree with a tsconfig and `files` (path under the tree → text). */
  async function tree(files: Record<string, string>): Promise<string> {
    const dir = await mkdtemp(join(tmpdir(), "warden-arch-"));
    dirs.push(dir);
    const all: Record<string, string> = {
      "tsconfig.json": JSON.stringify({
        compilerOptions: { module: "NodeNext", moduleResolution: "NodeNext" },
      }),
      ...files,
    };
    for (const [path, text] of Object.entries(all)) {
      await mkdir(dirname(join(dir, path)), { recursive: true });
      await writeFile(join(dir, path), text);
    }
    return dir;
  }

  it(
    "passes a tree that keeps the order",
    async () => {
      const dir = await tree({
        "src/low/index.ts": 'export { a } from "./a.js";\n',
        "src/low/a.ts": "export const a = 1;\n",
        "src/high/b.ts": 'import { a } from "../low/index.js";\nexport const b = a;\n',
      });
      expect(await architectureViolations(dir, layers)).toEqual([]);
    },
    CRUISE_MS,
  );

  it(
    "fails on an upward import, type-only included, and on bypassing an index.ts",
    async () => {
      const dir = await tree({
        "src/low/index.ts": "export type T = number;\n",
        "src/low/a.ts": 'import type { U } from "../high/index.js";\nexport type A = U;\n',
        "src/high/index.ts": "export type U = string;\n",
        "src/mid/m.ts": 'import type { A } from "../low/a.js";\nexport type M = A;\n',
      });
      expect(await architectureViolations(dir, layers)).toEqual([
        "layer-order: src/low/a.ts -> src/high/index.ts",
        "through-index: src/mid/m.ts -> src/low/a.ts",
      ]);
    },
    CRUISE_MS,
  );

  it(
    "fails on a cycle between files and on a unit the layers do not place",
    async () => {
      const dir = await tree({
        "src/low/a.ts": 'import { b } from "./b.js";\nexport const a = () => b;\n',
        "src/low/b.ts": 'import { a } from "./a.js";\nexport const b = () => a;\n',
        "src/stray/c.ts": "export const c = 1;\n",
      });
      expect(await architectureViolations(dir, layers)).toEqual([
        "no-cycle: src/low/a.ts -> src/low/b.ts -> src/low/a.ts",
        "unlisted: stray",
      ]);
    },
    CRUISE_MS,
  );

  /** The sandbox's folders and egress below it, with a stand-in dockerode package. */
  const seamLayers: Layer[] = [
    { unit: "egress", reason: "test" },
    { unit: "sandbox", reason: "test" },
  ];
  const seams = {
    backendFolders: ["sandbox/docker", "sandbox/kubernetes", "sandbox/memory"],
    backendBlind: [],
    dockerCode: DOCKER_CODE,
    dockerFree: [
      { folder: "sandbox/channel", notEntered: [] },
      { folder: "sandbox/kubernetes", notEntered: ["src/egress/index.ts"] },
      { folder: "sandbox/memory", notEntered: ["src/egress/index.ts"] },
    ],
  };
  const dockerode = {
    "node_modules/dockerode/package.json": JSON.stringify({ name: "dockerode", main: "index.js" }),
    "node_modules/dockerode/index.js": "module.exports = {};\n",
  };

  it(
    "fails on an import between two backend folders, type-only included",
    async () => {
      const dir = await tree({
        ...dockerode,
        "src/sandbox/docker/d.ts": "export const d = 1;\n",
        "src/sandbox/kubernetes/k.ts": 'import type { M } from "../memory/m.js";\nexport type K = M;\n',
        "src/sandbox/memory/m.ts": "export type M = number;\n",
        "src/sandbox/docker/e.ts": 'import type { K } from "../kubernetes/k.js";\nexport type E = K;\n',
      });
      expect(await architectureViolations(dir, seamLayers, seams)).toEqual([
        "backend-isolation: src/sandbox/docker/e.ts -> src/sandbox/kubernetes/k.ts",
        "backend-isolation: src/sandbox/kubernetes/k.ts -> src/sandbox/memory/m.ts",
      ]);
    },
    CRUISE_MS,
  );

  it(
    "fails when the server imports a backend folder, its index.ts and type-only included, and passes it through sandbox/index.ts",
    async () => {
      const layers: Layer[] = [...seamLayers, { unit: "server", reason: "test" }];
      const dir = await tree({
        ...dockerode,
        "src/sandbox/kubernetes/index.ts": 'export { k } from "./k.js";\n',
        "src/sandbox/kubernetes/k.ts": "export const k = 1;\nexport type K = number;\n",
        "src/sandbox/index.ts": 'export { k } from "./kubernetes/k.js";\n',
        "src/server/a.ts": 'import { k } from "../sandbox/kubernetes/index.js";\nexport const a = k;\n',
        "src/server/b.ts": 'import type { K } from "../sandbox/kubernetes/index.js";\nexport type B = K;\n',
        "src/server/c.ts": 'import { k } from "../sandbox/index.js";\nexport const c = k;\n',
      });
      const violations = await architectureViolations(dir, layers, { ...seams, backendBlind: ["server"] });
      expect(violations).toEqual([
        "backend-seam: src/server/a.ts -> src/sandbox/kubernetes/index.ts",
        "backend-seam: src/server/b.ts -> src/sandbox/kubernetes/index.ts",
      ]);
    },
    CRUISE_MS,
  );

  it(
    "fails when a Docker-free folder reaches dockerode or sandbox/docker through any import form, directly or through other modules",
    async () => {
      const dir = await tree({
        ...dockerode,
        "src/sandbox/docker/d.ts": "export const d = 1;\n",
        "src/sandbox/common.ts": 'import type Docker from "dockerode";\nexport type S = Docker;\n',
        "src/sandbox/channel/p.ts": 'import type { S } from "../common.js";\nexport type P = S;\n',
        "src/sandbox/channel/q.ts": 'export const q = () => import("../docker/d.js");\n',
        "src/sandbox/memory/r.ts": 'export { d } from "../common-d.js";\n',
        "src/sandbox/common-d.ts": 'export { d } from "./docker/d.js";\n',
      });
      expect(await architectureViolations(dir, seamLayers, seams)).toEqual([
        "docker-free: src/sandbox/channel/p.ts -> src/sandbox/common.ts -> dockerode",
        "docker-free: src/sandbox/channel/q.ts -> src/sandbox/docker/d.ts",
        "docker-free: src/sandbox/memory/r.ts -> src/sandbox/common-d.ts -> src/sandbox/docker/d.ts",
      ]);
    },
    CRUISE_MS,
  );

  it(
    "does not count Docker code behind a module the search does not enter (egress/index.ts for Kubernetes)",
    async () => {
      const dir = await tree({
        ...dockerode,
        "src/egress/index.ts": 'export { gateway } from "./gateway.js";\n',
        "src/egress/gateway.ts": 'import Docker from "dockerode";\nexport const gateway = Docker;\n',
        "src/sandbox/kubernetes/k.ts":
          'import { gateway } from "../../egress/index.js";\nexport const k = gateway;\n',
        "src/sandbox/channel/c.ts":
          'import { gateway } from "../../egress/index.js";\nexport const c = gateway;\n',
      });
      expect(await architectureViolations(dir, seamLayers, seams)).toEqual([
        "docker-free: src/sandbox/channel/c.ts -> src/egress/index.ts -> src/egress/gateway.ts -> dockerode",
      ]);
    },
    CRUISE_MS,
  );
});

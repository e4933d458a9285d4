/**
 * A Python package's compiled extension (a `.so`) loads from /workspace but not from HOME or /tmp,
 * which are `noexec` tmpfs on Docker: the dynamic loader cannot map the file executable. So a
 * package with extensions (numpy, pydantic-core) goes into a venv in /workspace, as docs/network.md
 * and the README say. The extension here is one of the image's own (Python's `_bz2`), copied, so
 * the test needs no network.
 */
import { afterAll, beforeAll, expect, it } from "vitest";
import { createSandbox } from "../../../src/sandbox/index.js";
import type { Sandbox } from "../../../src/sandbox/types.js";
import { TEST_IMAGE } from "../../helpers/backend.js";
import { describeEngine } from "../../helpers/engine.js";
import { leftovers, run, testTenant } from "../../helpers/sandbox-fixture.js";

const tenant = testTenant("noexec-so");

/** Copies Python's _bz2 extension into `dir` as a module of its own and imports it from there. */
const importFrom = (dir: string) =>
  `mkdir -p ${dir}/ext && cp /usr/lib/python3.11/lib-dynload/_bz2.cpython-311-x86_64-linux-gnu.so ${dir}/ext/ && ` +
  `cd ${dir}/ext && python3 -c 'import _bz2, os; print(os.path.dirname(_bz2.__file__))' 2>&1 | tail -1`;

describeEngine("compiled extensions and noexec mounts (Docker)", () => {
  let box: Sandbox;
  beforeAll(async () => {
    box = await createSandbox({ tenant, ...(TEST_IMAGE ? { image: TEST_IMAGE } : {}) });
  });
  afterAll(async () => {
    await box?.destroy();
    expect(await leftovers(tenant)).toEqual([]);
  });

  it("loads from /workspace", async () => {
    expect((await run(box, importFrom("/workspace"))).stdout).toBe("/workspace/ext\n");
  });

  it.each(["/home/sandbox", "/tmp"])("cannot load from %s", async (dir) => {
    expect((await run(box, importFrom(dir))).stdout).toMatch(/failed to map segment from shared object\n$/);
  });
});

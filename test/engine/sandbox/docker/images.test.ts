/** `buildSandboxImage` on a tiny context (the real image is shared by every suite, so it is not rebuilt here). */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect, it } from "vitest";
import { baseImageOf } from "../../../../src/sandbox/docker/images.js";
import { buildSandboxImage, getDocker, imageExists } from "../../../../src/sandbox/index.js";
import { describeEngine } from "../../../helpers/engine.js";

describeEngine("sandbox images", () => {
  it("reads the base image from the Dockerfile's first FROM", async () => {
    expect(await baseImageOf(join(import.meta.dirname, "../../../../images/sandbox/Dockerfile"))).toBe(
      "debian:bookworm-slim",
    );
  });

  it("builds a context with progress lines and reports build errors", async () => {
    const dir = await mkdtemp(join(tmpdir(), "warden-build-"));
    const tag = `warden-test-build:${process.pid}`;
    try {
      await writeFile(
        join(dir, "Dockerfile"),
        'FROM debian:bookworm-slim\nLABEL io.warden.test="1"\nRUN echo built-marker\n',
      );
      const lines: string[] = [];
      expect(
        await buildSandboxImage({ contextDir: dir, tag, noCache: true, onProgress: (l) => lines.push(l) }),
      ).toBe(tag);
      expect(lines.some((l) => l.startsWith("Step 1/3 : FROM debian:bookworm-slim"))).toBe(true);
      expect(lines).toContain("built-marker");
      expect(await imageExists(getDocker(), tag)).toBe(true);
      await writeFile(join(dir, "Dockerfile"), "FROM debian:bookworm-slim\nRUN exit 7\n");
      await expect(buildSandboxImage({ contextDir: dir, tag: `${tag}-bad` })).rejects.toMatchObject({
        code: "SANDBOX_ERROR",
        message: expect.stringContaining("returned a non-zero code: 7"),
      });
      // forcerm: the failed step's intermediate container is removed too (it used to be left behind).
      const failedStep = (await getDocker().listContainers({ all: true })).filter((c) =>
        c.Command.includes("exit 7"),
      );
      expect(failedStep).toEqual([]);
    } finally {
      await getDocker()
        .getImage(tag)
        .remove({ force: true })
        .catch(() => {});
      await rm(dir, { recursive: true, force: true });
    }
  });
});

/**
 * First-hour errors name the fix (issue 36 item 9): no engine at the address tried, a missing
 * image (the default one or another), an image reference Docker would refuse.
 */
import { join } from "node:path";
import Docker from "dockerode";
import { describe, expect, it } from "vitest";
import { EngineUnreachableError, fromDockerError, ImageMissingError } from "../../../src/errors.js";
import { pingEngine, requireImage } from "../../../src/sandbox/docker/engine.js";
import { resolveSandboxOptions } from "../../../src/sandbox/options.js";

/** A client whose every image inspect answers 404, as the engine does for an absent image. */
const noImages = {
  getImage: () => ({
    inspect: () => Promise.reject(Object.assign(new Error("no such image"), { statusCode: 404 })),
  }),
} as unknown as Docker;

describe("a missing image", () => {
  it("names `warden images build` for the default image", async () => {
    await expect(requireImage(noImages, "warden-sandbox:latest", "warden-sandbox:latest")).rejects.toThrow(
      new ImageMissingError("warden-sandbox:latest").message,
    );
    expect(new ImageMissingError("warden-sandbox:latest").message).toBe(
      "Sandbox image 'warden-sandbox:latest' is not present. Build it with 'warden images build'.",
    );
  });

  it("names pulling or building another image, or going back to the default", async () => {
    await expect(requireImage(noImages, "python:3.12", "warden-sandbox:latest")).rejects.toMatchObject({
      code: "IMAGE_MISSING",
      message:
        "Sandbox image 'python:3.12' is not present. Pull it ('docker pull python:3.12') or build it; or leave out --image (the image option) to use warden-sandbox:latest, which 'warden images build' builds.",
    });
  });
});

describe("an image reference Docker would refuse", () => {
  it("is refused before any engine call, with the form expected", async () => {
    await expect(resolveSandboxOptions({ image: "My Image" }, "s1")).rejects.toMatchObject({
      code: "INVALID_ARGUMENT",
      field: "image",
      message:
        'image must be an image reference such as warden-sandbox:latest or registry.example:5000/team/tool:1.2 (lower-case name, then :tag or @sha256:digest), got "My Image".',
    });
    for (const image of [
      "debian:bookworm-slim",
      "localhost:5000/team/tool:1.2",
      `ghcr.io/a/b@sha256:${"a".repeat(64)}`,
      `sha256:${"b".repeat(64)}`,
    ])
      expect((await resolveSandboxOptions({ image }, "s1")).image).toBe(image);
    await expect(resolveSandboxOptions({ image: "Warden:latest" }, "s1")).rejects.toMatchObject({
      field: "image",
    });
  });
});

describe("no engine", () => {
  it("names the address tried and how to start an engine", async () => {
    const socket = join(import.meta.dirname, "no-docker.sock");
    await expect(pingEngine(new Docker({ socketPath: socket }))).rejects.toMatchObject({
      code: "ENGINE_UNREACHABLE",
      message: `Docker engine unreachable (ENOENT at unix://${socket} while pinging the Docker engine). Start Docker (e.g. 'sudo systemctl start docker', or Docker Desktop), or set DOCKER_HOST to a reachable engine; in a warden checkout, 'npm run engine' (scripts/ensure-docker.sh) starts one.`,
    });
  });

  it("says how to get access when the socket refuses this user (EACCES)", () => {
    const err = fromDockerError(Object.assign(new Error("denied"), { code: "EACCES" }), {
      what: "pinging the Docker engine",
      engine: "unix:///var/run/docker.sock",
    });
    expect(err).toBeInstanceOf(EngineUnreachableError);
    expect(err.message).toBe(
      "Docker engine unreachable (EACCES at unix:///var/run/docker.sock while pinging the Docker engine). This user may not use the engine's socket: add it to the 'docker' group (then log in again), or set DOCKER_HOST to an engine it may use.",
    );
  });
});

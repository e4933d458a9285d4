/**
 * Which gateway image the egress section's sessions run. warden starts every gateway from
 * GATEWAY_IMAGE (`warden-gateway:latest`, the shared tag `warden images build` writes); with
 * WARDEN_BENCH_GATEWAY_IMAGE set, the bench maps that name to the given image on the process's
 * dockerode client (its inspect and its createContainer), so a build under another tag (e.g. the
 * Squid gateway built from an older checkout's images/gateway) runs without replacing the shared
 * tag. Bench only: nothing in src/ reads the variable.
 */
import type Docker from "dockerode";
import { GATEWAY_IMAGE } from "../../src/egress/index.js";

/** Maps GATEWAY_IMAGE to `image` on `docker` until the returned function is called. Resolves the image's id. */
export async function useGatewayImage(
  docker: Docker,
  image: string | undefined,
): Promise<{ name: string; id: string; restore(): void }> {
  const name = image ?? GATEWAY_IMAGE;
  const id = ((await docker.getImage(name).inspect()) as { Id: string }).Id;
  if (!image || image === GATEWAY_IMAGE) return { name, id, restore: () => {} };
  const getImage = docker.getImage.bind(docker);
  const createContainer = docker.createContainer.bind(docker);
  docker.getImage = (n: string) => getImage(n === GATEWAY_IMAGE ? image : n);
  docker.createContainer = (opts: Docker.ContainerCreateOptions) =>
    createContainer(opts.Image === GATEWAY_IMAGE ? { ...opts, Image: image } : opts);
  return {
    name,
    id,
    restore() {
      docker.getImage = getImage;
      docker.createContainer = createContainer;
    },
  };
}

/**
 * `warden images build [--no-cache]`: builds the default sandbox image and the egress gateway image (bootstrapping their base image
 * first when no registry can provide it), printing the build's progress lines.
 * `warden images list`: the warden images present locally.
 */
import type { Command } from "commander";
import { buildGatewayImage, buildSandboxImage, listSandboxImages } from "../../sandbox/index.js";

/** Registers `warden images`. */
export function registerImages(program: Command): void {
  const images = program.command("images").description("Build and list warden's sandbox images");
  images
    .command("build")
    .description(
      "Build the sandbox image (images/sandbox) and the egress gateway image (images/gateway); bootstraps the base image if needed",
    )
    .option("--no-cache", "build without Docker's layer cache")
    .action(async (flags: { cache: boolean }) => {
      const options = { noCache: !flags.cache, onProgress: (line: string) => console.log(line) };
      console.log(`built ${await buildSandboxImage(options)}`);
      console.log(`built ${await buildGatewayImage(options)}`);
    });
  images
    .command("list")
    .description("List the warden images present locally")
    .action(async () => {
      for (const image of await listSandboxImages()) {
        const mib = (image.sizeBytes / (1024 * 1024)).toFixed(1);
        console.log(`${image.tag}\t${image.id.slice(7, 19)}\t${mib} MiB\t${image.created.toISOString()}`);
      }
    });
}

/** GET /workspace's stream bound (src/server/http/workspace-download.ts cutAfter): the archive ends in an error past it. */
import { Readable } from "node:stream";
import { describe, expect, it } from "vitest";
import { cutAfter } from "../../../../src/server/http/workspace-download.js";

const read = async (stream: Readable) => {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString();
};

describe("cutAfter", () => {
  it("passes an archive within the bound unchanged", async () => {
    expect(await read(cutAfter(Readable.from([Buffer.from("abc"), Buffer.from("def")]), 6))).toBe("abcdef");
  });

  it("ends with an error naming the bound once more went by, and destroys the source", async () => {
    const source = Readable.from([Buffer.from("abc"), Buffer.from("def"), Buffer.from("ghi")]);
    await expect(read(cutAfter(source, 5))).rejects.toThrow(
      "the workspace archive passed 5 bytes while it streamed",
    );
    expect(source.destroyed).toBe(true);
  });
});

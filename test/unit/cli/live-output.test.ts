/** `warden exec` on a terminal streams a command's output as it comes, then only what the result adds. */
import { describe, expect, it } from "vitest";
import { LiveOutput } from "../../../src/cli/output/live-output.js";

describe("exec live output", () => {
  it("writes each update's new part, then only the result's footer", () => {
    const written: string[] = [];
    const live = new LiveOutput((t) => written.push(t));
    live.update("1\n");
    live.update("1\n2\n");
    live.update("1\n2\n");
    expect(written).toEqual(["1\n", "2\n"]);
    expect(live.finish("1\n2\n3\n\nCommand exited with code 1")).toBe("3\n\nCommand exited with code 1");
  });

  it("stops streaming when the kept tail rolls, and prints the whole result after a marker", () => {
    const written: string[] = [];
    const live = new LiveOutput((t) => written.push(t));
    live.update("1\n2\n");
    live.update("2\n3\n");
    expect(written).toEqual(["1\n2\n"]);
    expect(live.finish("3\n\n[Showing lines 3-3 of 3.]")).toBe(
      "--- output cut while it ran; the result: ---\n3\n\n[Showing lines 3-3 of 3.]",
    );
  });

  it("prints the result as it is when nothing streamed", () => {
    expect(new LiveOutput(() => {}).finish("ok")).toBe("ok");
  });
});

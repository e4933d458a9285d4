import { describe, expect, it } from "vitest";
import { parseByteCount, sessionOptionsOf } from "../../../src/cli/flags/session-flags.js";

describe("--spill-max-bytes", () => {
  it("parses bytes with an optional binary unit", () => {
    expect(["0", "1000", "1k", "256m", "256M", "1g", "2GiB", "64 MB"].map((v) => parseByteCount(v))).toEqual([
      0, 1000, 1024, 268_435_456, 268_435_456, 1_073_741_824, 2_147_483_648, 67_108_864,
    ]);
  });

  it("refuses anything else, naming the flag and the form", () => {
    for (const v of ["-1", "1.5m", "lots", "", "1t"]) {
      expect(() => parseByteCount(v)).toThrow(
        `--spill-max-bytes must be a number of bytes, optionally with k, m or g (e.g. 268435456 or 256m), got '${v}'.`,
      );
    }
  });

  it("becomes the session's spill cap, and the notice tells how to raise it with the flag", async () => {
    const options = await sessionOptionsOf({ spillMaxBytes: 4096 });
    expect(options).toMatchObject({ spillMaxBytes: 4096, spillMaxBytesHint: "--spill-max-bytes" });
    const defaults = await sessionOptionsOf({});
    expect(defaults.spillMaxBytes).toBeUndefined();
    expect(defaults.spillMaxBytesHint).toBe("--spill-max-bytes");
  });
});

import { describe, expect, it } from "vitest";
import {
  parseExitFile,
  procStartTime,
  requestPath,
  segmentReads,
  segmentView,
} from "../../../src/process/files.js";
import { checkTerminalSize, resolveProcessLimits } from "../../../src/process/limits.js";

describe("a process's output segments", () => {
  it("keep the stream's last bytes: segments 6 to 9 of 1024 bytes, the last holding 784", () => {
    expect(segmentView([6, 7, 8, 9], 784, 1024)).toEqual({
      segments: [6, 7, 8, 9],
      keptFrom: 6144,
      outputBytes: 10000,
    });
  });

  it("are empty before any output", () => {
    expect(segmentView([], 0, 1024)).toEqual({ segments: [], keptFrom: 0, outputBytes: 0 });
  });

  it("split a read at segment boundaries", () => {
    expect(segmentReads(1000, 2100, 1024)).toEqual([
      { segment: 0, offset: 1000, length: 24 },
      { segment: 1, offset: 0, length: 1024 },
      { segment: 2, offset: 0, length: 1024 },
      { segment: 3, offset: 0, length: 28 },
    ]);
    expect(segmentReads(5, 0, 1024)).toEqual([]);
  });
});

describe("request file names", () => {
  it("are 16 digits and a kind, so they sort in the order they were written", () => {
    expect(requestPath("p3", 42, "signal")).toBe("/tmp/.warden/procs/p3/in/0000000000000042.signal");
  });
});

describe("exit.json", () => {
  it("reads a death by signal", () => {
    expect(
      parseExitFile(
        '{"code":143,"signal":15,"endedAt":1700000000000,"outputBytes":12,"droppedBytes":0}',
        "p1",
      ),
    ).toEqual({
      code: 143,
      signal: 15,
      endedAt: 1700000000000,
      outputBytes: 12,
      droppedBytes: 0,
    });
  });

  it("refuses a malformed file, naming the process", () => {
    expect(() => parseExitFile('{"code":"0"}', "p2")).toThrow(
      "The exit status of background process p2 is malformed in the sandbox (/tmp/.warden/procs/p2/exit.json).",
    );
  });
});

describe("/proc/<pid>/stat", () => {
  it("gives field 22 (the start time), even when the command name holds spaces and parentheses", () => {
    const stat = "4242 (a b) (c)) S 1 4242 4242 0 -1 4194560 100 0 0 0 1 2 0 0 20 0 1 0 987654 1000 10";
    expect(procStartTime(stat)).toBe(987654);
  });
});

describe("process limits", () => {
  it("default to 8 running, 16 exited, 8 MiB kept in 1 MiB segments", () => {
    expect(resolveProcessLimits()).toEqual({
      maxRunning: 8,
      maxExited: 16,
      keptOutputBytes: 8388608,
      segmentBytes: 1048576,
    });
  });

  it("refuse kept output that is not a multiple of the segment size", () => {
    expect(() => resolveProcessLimits({ keptOutputBytes: 1500, segmentBytes: 1024 })).toThrow(
      "processes.keptOutputBytes must be a multiple of segmentBytes (1024), got 1500.",
    );
  });

  it("refuse a terminal size outside 1..1000", () => {
    expect(() => checkTerminalSize({ cols: 0, rows: 24 }, "pty")).toThrow(
      "pty.cols must be an integer from 1 to 1000, got 0.",
    );
  });
});

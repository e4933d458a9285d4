import { describe, expect, it } from "vitest";
import { runToolCalls } from "../../../src/pipeline/index.js";
import { createProcessTool } from "../../../src/tools/index.js";
import type { ToolContent, ToolContext } from "../../../src/tools/types.js";
import { FakeProcesses } from "../../helpers/fake-processes.js";
import { FakeSandbox } from "../../helpers/fake-sandbox.js";
import { contextWith, fakeSpill } from "../../helpers/pipeline-fakes.js";

const text = (content: ToolContent[]) => (content[0]?.type === "text" ? content[0].text : "");

/** A fresh tool and fake processes; `run(args)` executes one call and returns its text. */
function setup() {
  const tool = createProcessTool();
  const processes = new FakeProcesses();
  const ctx: ToolContext = { sandbox: new FakeSandbox(), spill: fakeSpill(), processes };
  // biome-ignore lint/suspicious/noExplicitAny: the tests pass arguments as a model would
  const call = (args: any) => tool.execute("c1", args, ctx);
  const run = async (args: unknown) => text((await call(args)).content);
  return { tool, processes, ctx, call, run };
}

describe("process tool: schema and description", () => {
  it("describes every action and field for the model", () => {
    const { tool } = setup();
    expect(tool.name).toBe("process");
    expect(tool.description).toBe(
      "Run a command in the background and work with it while it runs (servers, watchers, REPLs, long builds). " +
        "Actions: start {command, cwd?, pty?} runs a bash command in the background and returns its id at once; " +
        "output {id, offset?} returns its next output (stdout and stderr merged), truncated to 2000 lines or 50KB " +
        "(whichever is hit first), and the offset to continue from; input {id, text, close?} writes text to its " +
        "stdin exactly as given (end a line with \\n), close: true then closes stdin; kill {id, signal?} sends a " +
        "signal (default TERM); list shows the session's processes; wait {id, timeout?} waits until it exits, or " +
        "timeout seconds pass. Processes end with the session. For a command that finishes on its own, use bash.",
    );
    expect(JSON.parse(JSON.stringify(tool.parameters))).toEqual({
      type: "object",
      required: ["action"],
      properties: {
        action: {
          type: "string",
          enum: ["start", "output", "input", "kill", "list", "wait"],
          description: "What to do: start, output, input, kill, list or wait",
        },
        command: { type: "string", description: "start: bash command to run in the background" },
        cwd: {
          type: "string",
          description: "start: working directory (optional, default the current working directory)",
        },
        pty: {
          type: "boolean",
          description:
            "start: run under an 80x24 pseudo-terminal, for programs that need one (REPLs, prompts)",
        },
        id: {
          type: "string",
          description: "output, input, kill, wait: the process id start returned (p1, p2, ...)",
        },
        offset: {
          type: "integer",
          minimum: 0,
          description:
            "output: byte offset to read from (optional, default where the last output call stopped)",
        },
        text: { type: "string", description: "input: text to write to its stdin, exactly as given" },
        close: { type: "boolean", description: "input: close its stdin after the text (end of input)" },
        signal: {
          type: "string",
          enum: ["TERM", "INT", "KILL", "HUP", "QUIT", "USR1", "USR2", "STOP", "CONT", "WINCH"],
          description: "kill: signal name without SIG (default TERM)",
        },
        timeout: {
          type: "number",
          exclusiveMinimum: 0,
          description: "wait: timeout in seconds (optional, no default timeout)",
        },
      },
    });
  });
});

describe("process tool: actions", () => {
  it("start runs the command with bash -c, in a cwd resolved like a tool path, under a pty when asked", async () => {
    const { processes, run } = setup();
    expect(await run({ action: "start", command: "npm run dev" })).toBe(
      'Started process p1 in the background. {"action": "output", "id": "p1"} reads its output.',
    );
    await run({ action: "start", command: "python3", cwd: "sub/dir", pty: true });
    expect(processes.starts).toEqual([
      { command: { shell: "npm run dev" } },
      { command: { shell: "python3" }, cwd: "/workspace/sub/dir", pty: { cols: 80, rows: 24 } },
    ]);
  });

  it("output returns what is new, the offset to continue from and the state; the next call continues there", async () => {
    const { processes, run } = setup();
    await run({ action: "start", command: "make" });
    processes.print("p1", "building\n");
    expect(await run({ action: "output", id: "p1" })).toBe(
      "building\n\n\n[No more output yet. Use offset=9 to read what comes next.]\n\nProcess p1 is running.",
    );
    processes.print("p1", "done\n");
    processes.exit("p1", 0);
    expect(await run({ action: "output", id: "p1" })).toBe(
      "done\n\n\n[End of output.]\n\nProcess p1 exited with code 0.",
    );
    expect(await run({ action: "output", id: "p1" })).toBe(
      "(no new output)\n\n[End of output.]\n\nProcess p1 exited with code 0.",
    );
    expect(await run({ action: "output", id: "p1", offset: 0 })).toBe(
      "building\ndone\n\n\n[End of output.]\n\nProcess p1 exited with code 0.",
    );
    expect(processes.reads.map((r) => r.offset)).toEqual([0, 9, 14, 0]);
    expect(processes.reads.every((r) => r.maxBytes === 51_200)).toBe(true);
  });

  it("output cuts a long slice at 2000 lines, then at 50KB (whole lines), each time naming the offset to continue from", async () => {
    const { processes, run, call } = setup();
    await run({ action: "start", command: "seq 3000" });
    const lines = Array.from({ length: 3000 }, (_, i) => `line ${i + 1}\n`).join("");
    processes.print("p1", lines);
    const first = await call({ action: "output", id: "p1" });
    const cut = Buffer.byteLength(Array.from({ length: 2000 }, (_, i) => `line ${i + 1}\n`).join(""));
    expect(cut).toBe(18_893);
    expect(
      text(first.content).endsWith(
        `line 2000\n\n\n[Showing bytes 0-18892 of 28893 (2000 lines limit). Use offset=18893 to continue.]\n\nProcess p1 is running.`,
      ),
    ).toBe(true);
    expect(text(first.content).startsWith("line 1\nline 2\n")).toBe(true);
    expect(first.details).toMatchObject({
      action: "output",
      output: { offset: 0, nextOffset: 18_893, totalBytes: 28_893, truncatedBy: "lines" },
    });
    const rest = Array.from({ length: 1000 }, (_, i) => `line ${i + 2001}\n`).join("");
    expect(await run({ action: "output", id: "p1" })).toBe(
      `${rest}\n\n[No more output yet. Use offset=28893 to read what comes next.]\n\nProcess p1 is running.`,
    );

    const { processes: big, run: runBig } = setup();
    await runBig({ action: "start", command: "cat big" });
    big.print("p1", `${"x".repeat(99)}\n`.repeat(1000)); // 100,000 bytes in 100-byte lines
    const bytes = await runBig({ action: "output", id: "p1" });
    expect(bytes.slice(-120)).toBe(
      `${"x".repeat(14)}\n\n\n[Showing bytes 0-51199 of 100000 (50.0KB limit). Use offset=51200 to continue.]\n\nProcess p1 is running.`,
    );
    expect(bytes.length).toBe(51_200 + 2 + 79 + 2 + 22); // 512 whole lines, the notice, the state

    // One line longer than the limit is cut inside, never inside a character.
    const { processes: wide, run: runWide } = setup();
    await runWide({ action: "start", command: "cat wide" });
    wide.print("p1", "€".repeat(20_000)); // 60,000 bytes, no newline
    const part = await runWide({ action: "output", id: "p1" });
    expect(part).toBe(
      `${"€".repeat(17_066)}\n\n[Showing bytes 0-51197 of 60000 (50.0KB limit). Use offset=51198 to continue.]\n\nProcess p1 is running.`,
    );
  });

  it("output never splits a character: an incomplete one at the end waits for the next call", async () => {
    const { processes, run } = setup();
    await run({ action: "start", command: "cat" });
    processes.print("p1", Buffer.from([0x61, 0xe2, 0x82])); // "a" and the first two bytes of "€"
    expect(await run({ action: "output", id: "p1" })).toBe(
      "a\n\n[Showing bytes 0-0 of 3. Use offset=1 to continue.]\n\nProcess p1 is running.",
    );
    processes.print("p1", Buffer.from([0xac]));
    expect(await run({ action: "output", id: "p1" })).toBe(
      "€\n\n[No more output yet. Use offset=4 to read what comes next.]\n\nProcess p1 is running.",
    );
  });

  it("output says how many bytes were skipped, sanitises ANSI and bad bytes, and names dropped output", async () => {
    const { processes, run } = setup();
    await run({ action: "start", command: "noisy" });
    processes.print("p1", "old\n\u001b[31mred\u001b[0m\n\u0000\n");
    const p = processes.get("p1");
    p.keptFrom = 4;
    p.droppedBytes = 7;
    processes.exit("p1", 143, 15);
    expect(await run({ action: "output", id: "p1", offset: 1 })).toBe(
      "red\n\uFFFD\n\n\n[3 bytes skipped: output before offset 4 is no longer kept]\n\n[End of output.]\n\n" +
        "[1 invalid UTF-8 or NUL byte replaced with U+FFFD]\n\n" +
        "[7 bytes of output could not be kept (the sandbox's /tmp was full)]\n\n" +
        "Process p1 ended by signal 15 (exit code 143).",
    );
  });

  it("input writes the text as given, then closes stdin when asked", async () => {
    const { processes, run } = setup();
    await run({ action: "start", command: "python3", pty: true });
    expect(await run({ action: "input", id: "p1", text: "print(1)\n" })).toBe(
      "Wrote 9 bytes to the stdin of process p1.",
    );
    expect(await run({ action: "input", id: "p1", text: "€", close: true })).toBe(
      "Wrote 3 bytes to the stdin of process p1, then closed it.",
    );
    expect(await run({ action: "input", id: "p1", text: "", close: true })).toBe(
      "Closed the stdin of process p1.",
    );
    const p = processes.get("p1");
    expect(p.input.map((b) => b.toString())).toEqual(["print(1)\n", "€"]);
    expect(p.inputClosed).toBe(true);
    await expect(run({ action: "input", id: "p1", text: "" })).rejects.toThrow(
      "process input needs text to write, or close: true to close stdin. Nothing was done.",
    );
  });

  it("kill sends TERM by default, or the signal named", async () => {
    const { processes, run } = setup();
    await run({ action: "start", command: "sleep 100" });
    expect(await run({ action: "kill", id: "p1" })).toBe("Sent TERM to process p1.");
    expect(await run({ action: "kill", id: "p1", signal: "INT" })).toBe("Sent INT to process p1.");
    expect(processes.get("p1").signals).toEqual(["TERM", "INT"]);
  });

  it("list shows each process: id, state, output size, pty, first line of its command", async () => {
    const { processes, run } = setup();
    expect(await run({ action: "list" })).toBe("(no processes)");
    await run({ action: "start", command: "npm run dev" });
    await run({ action: "start", command: "python3", pty: true });
    await run({ action: "start", command: "for i in 1 2; do\n  echo $i\ndone" });
    processes.print("p1", "x".repeat(1536));
    processes.exit("p3", 0);
    expect(await run({ action: "list" })).toBe(
      "p1  running  1.5KB  npm run dev\np2  running  0B  pty  python3\np3  exited with code 0  0B  for i in 1 2; do …",
    );
  });

  it("wait reports the exit, or that it still runs after the timeout, and the output not read yet", async () => {
    const { processes, run } = setup();
    await run({ action: "start", command: "make" });
    processes.print("p1", "12345");
    expect(await run({ action: "wait", id: "p1", timeout: 1.5 })).toBe(
      'Process p1 is still running after 1.5 seconds. 5 bytes of its output not read yet: {"action": "output", "id": "p1"} reads them.',
    );
    await run({ action: "output", id: "p1" });
    processes.exit("p1", 2);
    expect(await run({ action: "wait", id: "p1" })).toBe("Process p1 exited with code 2.");
    expect(processes.waits).toEqual([{ id: "p1", timeoutMs: 1500 }, { id: "p1" }]);
    await expect(run({ action: "wait", id: "p1", timeout: 3e6 })).rejects.toThrow(
      "timeout must be > 0 and at most 2147483.647 seconds, got 3000000.",
    );
  });
});

describe("process tool: errors", () => {
  it("an unknown id is named, with how to list the session's processes", async () => {
    const { run } = setup();
    for (const action of ["output", "kill", "wait"])
      await expect(run({ action, id: "p9" })).rejects.toThrow(
        'No process p9 in this session. {"action": "list"} shows the session\'s processes.',
      );
    await expect(run({ action: "input", id: "p9", text: "x" })).rejects.toMatchObject({ code: "NOT_FOUND" });
  });

  it("a field the action does not take, or one it needs, is named and nothing is done", async () => {
    const { processes, run } = setup();
    await expect(run({ action: "start", command: "x", timeout: 5 })).rejects.toThrow(
      "process start takes only command, cwd, pty; got timeout. Nothing was done.",
    );
    await expect(run({ action: "list", id: "p1" })).rejects.toThrow(
      "process list takes no other field; got id. Nothing was done.",
    );
    await expect(run({ action: "input", id: "p1" })).rejects.toThrow(
      "process input needs text to write, or close: true to close stdin. Nothing was done.",
    );
    await expect(run({ action: "kill" })).rejects.toThrow("process kill needs id. Nothing was done.");
    await expect(run({ action: "start" })).rejects.toThrow("process start needs command. Nothing was done.");
    expect(processes.starts).toEqual([]);
  });

  it("a start the session's processes refuse (their limit) comes back as their error result, with its code", async () => {
    const processes = new FakeProcesses({ maxRunning: 1 });
    processes.add({ shell: "sleep 9" });
    const [result] = await runToolCalls(
      [{ id: "c1", name: "process", arguments: { action: "start", command: "sleep 10" } }],
      contextWith([createProcessTool()], { processes }),
    );
    expect(result).toMatchObject({
      isError: true,
      content: [{ type: "text", text: "1 processes are running, the session's limit; end one first." }],
      details: { stage: "execute", code: "CONFLICT" },
    });
  });

  it("a session without processes gets a clear error result (code CONFLICT) from the pipeline", async () => {
    const tool = createProcessTool();
    const [result] = await runToolCalls(
      [{ id: "c1", name: "process", arguments: { action: "list" } }],
      contextWith([tool]),
    );
    expect(result?.isError).toBe(true);
    expect(result?.content).toEqual([
      {
        type: "text",
        text: "This session has no background processes, so the process tool cannot run here. Run the command with bash instead.",
      },
    ]);
    expect(result?.details).toEqual({ stage: "execute", code: "CONFLICT" });
  });

  it("the pipeline hands the session's processes to the tool", async () => {
    const processes = new FakeProcesses();
    processes.add({ shell: "sleep 9" });
    const [result] = await runToolCalls(
      [{ id: "c1", name: "process", arguments: { action: "list" } }],
      contextWith([createProcessTool()], { processes }),
    );
    expect(result?.content).toEqual([{ type: "text", text: "p1  running  0B  sleep 9" }]);
  });
});

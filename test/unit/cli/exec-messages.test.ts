/** `warden exec`: an unknown or disabled tool is named with the enabled tools; a spill footer says it is not kept. */
import { describe, expect, it } from "vitest";
import { checkToolEnabled, spillNote } from "../../../src/cli/commands/exec.js";
import { BUILTIN_TOOL_NAMES, builtinTools } from "../../../src/tools/index.js";

describe("warden exec messages", () => {
  it("an unknown tool lists the enabled tools and points to bash", () => {
    expect(() => checkToolEnabled("cat", ["read", "bash", "ls"])).toThrow(
      `Unknown tool 'cat'. Enabled tools: read, bash, ls. A shell command goes through bash: warden exec bash '{"command":"cat …"}'.`,
    );
  });

  it("a built-in tool disabled by --tools is reported as disabled, not as not found", () => {
    expect(() => checkToolEnabled("bash", ["read", "ls"])).toThrow(
      "Tool bash is disabled in this session (--tools, --exclude-tools, --no-tools or --no-builtin-tools); enabled tools: read, ls.",
    );
    expect(() => checkToolEnabled("read", ["read"])).not.toThrow();
  });

  it("every built-in tool, and only those, counts as built-in (BUILTIN_TOOL_NAMES matches builtinTools())", () => {
    expect(BUILTIN_TOOL_NAMES).toEqual(builtinTools().map((t) => t.name));
    for (const name of BUILTIN_TOOL_NAMES) {
      expect(() => checkToolEnabled(name, [])).toThrow(`Tool ${name} is disabled in this session`);
    }
  });

  it("a Full output footer says the spill file is gone once exec exits", () => {
    expect(spillNote("x\n\n[Showing lines 2-3 of 3. Full output: /spill/bash-0a1b2c3d.log]")).toBe(
      "x\n\n[Showing lines 2-3 of 3. Full output not kept: /spill/bash-0a1b2c3d.log was in exec's session, removed when exec exited (run the command in `warden run`, or redirect its output to a file in a --workspace to keep it)]",
    );
  });
});

import { describe, expect, it } from "vitest";
import { InvalidArgumentError } from "../../../src/errors.js";
import { buildProviderTools, createToolRegistry, selectEnabledTools } from "../../../src/pipeline/index.js";
import { echoTool } from "../../helpers/pipeline-fakes.js";

const named = (...names: string[]) => names.map((name) => echoTool({ name, description: `${name} tool` }));
const registry = createToolRegistry(named("read", "bash", "edit"), named("extra"));
const namesOf = (tools: { name: string }[]) => tools.map((t) => t.name);

describe("selectEnabledTools", () => {
  it("enables every registered tool by default, in registry order", () => {
    expect(namesOf(selectEnabledTools(registry))).toEqual(["read", "bash", "edit", "extra"]);
  });

  it("treats --tools as a strict allowlist kept in registry order", () => {
    expect(namesOf(selectEnabledTools(registry, { tools: ["edit", "read"] }))).toEqual(["read", "edit"]);
  });

  it("rejects an unknown name in --tools, naming it and the known tools", () => {
    expect(() => selectEnabledTools(registry, { tools: ["read", "rm"] })).toThrow(
      new InvalidArgumentError("Unknown tool(s) in --tools: rm. Known tools: read, bash, edit, extra."),
    );
  });

  it("applies --exclude-tools after the allowlist", () => {
    expect(
      namesOf(selectEnabledTools(registry, { tools: ["read", "bash"], excludeTools: ["bash"] })),
    ).toEqual(["read"]);
  });

  it("--no-tools enables nothing; --no-builtin-tools keeps only extra tools", () => {
    expect(selectEnabledTools(registry, { noTools: true })).toEqual([]);
    expect(namesOf(selectEnabledTools(registry, { noBuiltinTools: true }))).toEqual(["extra"]);
  });

  it("rejects a duplicate tool name in the registry", () => {
    expect(() => createToolRegistry(named("read", "read"))).toThrow(InvalidArgumentError);
  });
});

describe("opt-in tools (the process tool)", () => {
  const withOptIn = createToolRegistry(named("read", "bash"), named("extra"), named("process"));

  it("are registered but never enabled by default, nor by --exclude-tools or --no-builtin-tools", () => {
    expect(namesOf(selectEnabledTools(withOptIn))).toEqual(["read", "bash", "extra"]);
    expect(namesOf(selectEnabledTools(withOptIn, { excludeTools: ["bash"] }))).toEqual(["read", "extra"]);
    expect(namesOf(selectEnabledTools(withOptIn, { noBuiltinTools: true }))).toEqual(["extra"]);
  });

  it("are enabled when --tools names them, and listed among the known tools", () => {
    expect(namesOf(selectEnabledTools(withOptIn, { tools: ["bash", "process"] }))).toEqual([
      "bash",
      "process",
    ]);
    expect(namesOf(selectEnabledTools(withOptIn, { tools: ["process"], noBuiltinTools: true }))).toEqual([
      "process",
    ]);
    expect(selectEnabledTools(withOptIn, { tools: ["process"], noTools: true })).toEqual([]);
    expect(() => selectEnabledTools(withOptIn, { tools: ["proces"] })).toThrow(
      new InvalidArgumentError(
        "Unknown tool(s) in --tools: proces. Known tools: read, bash, extra, process.",
      ),
    );
  });
});

describe("buildProviderTools", () => {
  it("builds OpenAI function definitions from the enabled set only, parameters = the JSON schema", () => {
    const enabled = selectEnabledTools(registry, { tools: ["bash"] });
    expect(buildProviderTools(enabled)).toEqual([
      {
        type: "function",
        function: {
          name: "bash",
          description: "bash tool",
          parameters: {
            type: "object",
            required: ["text"],
            properties: { text: { type: "string" }, times: { type: "number" } },
          },
        },
      },
    ]);
  });
});

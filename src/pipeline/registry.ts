/**
 * The three tool sets, kept apart: the registry (every known tool), the enabled set (Pi's CLI flags
 * `--tools` strict allowlist, `--exclude-tools` after it, `--no-tools`, `--no-builtin-tools`), and the
 * provider schema (OpenAI function definitions built from the enabled set only). An opt-in tool (the
 * process tool) is registered but enabled only when `--tools` names it.
 */
import { InvalidArgumentError } from "../errors.js";
import type { AnyTool } from "../tools/index.js";
import type { ProviderTool, ToolSelection } from "./types.js";

/** Every known tool in registration order, which of them are built in, and which are opt-in. */
export interface ToolRegistry {
  readonly tools: ReadonlyMap<string, AnyTool>;
  readonly builtinNames: ReadonlySet<string>;
  /** Tools enabled only when the selection's `tools` names them (never by default). */
  readonly optInNames: ReadonlySet<string>;
}

/**
 * Builds a registry from the built-in tools, extra ones, and opt-in ones (registered after the
 * others, enabled only by name). Throws InvalidArgumentError on a duplicate name.
 */
export function createToolRegistry(
  builtins: readonly AnyTool[],
  extra: readonly AnyTool[] = [],
  optIn: readonly AnyTool[] = [],
): ToolRegistry {
  const tools = new Map<string, AnyTool>();
  for (const tool of [...builtins, ...extra, ...optIn]) {
    if (tools.has(tool.name)) {
      throw new InvalidArgumentError(
        `Tool '${tool.name}' is registered twice; give each tool a unique name.`,
      );
    }
    tools.set(tool.name, tool);
  }
  return {
    tools,
    builtinNames: new Set(builtins.map((t) => t.name)),
    optInNames: new Set(optIn.map((t) => t.name)),
  };
}

/**
 * The enabled tools, in registry order. `noTools` enables nothing; `noBuiltinTools` drops the
 * built-ins; `tools` is a strict allowlist (a name not in the registry throws InvalidArgumentError
 * naming it and the known tools); `excludeTools` is removed after the allowlist. An opt-in tool is
 * enabled only when `tools` names it.
 */
export function selectEnabledTools(registry: ToolRegistry, selection: ToolSelection = {}): AnyTool[] {
  if (selection.noTools) return [];
  if (selection.tools) {
    const unknown = selection.tools.filter((name) => !registry.tools.has(name));
    if (unknown.length > 0) {
      const known = [...registry.tools.keys()].join(", ");
      throw new InvalidArgumentError(
        `Unknown tool(s) in --tools: ${unknown.join(", ")}. Known tools: ${known}.`,
      );
    }
  }
  const allow = selection.tools ? new Set(selection.tools) : undefined;
  const exclude = new Set(selection.excludeTools ?? []);
  return [...registry.tools.values()].filter(
    (tool) =>
      !(selection.noBuiltinTools && registry.builtinNames.has(tool.name)) &&
      (allow ? allow.has(tool.name) : !registry.optInNames.has(tool.name)) &&
      !exclude.has(tool.name),
  );
}

/** OpenAI chat `tools[]` entries for `enabled`; `parameters` is the tool's TypeBox JSON schema as plain JSON. */
export function buildProviderTools(enabled: readonly AnyTool[]): ProviderTool[] {
  return enabled.map((tool) => ({
    type: "function",
    function: {
      name: tool.name,
      description: tool.description,
      parameters: JSON.parse(JSON.stringify(tool.parameters)) as Record<string, unknown>,
    },
  }));
}

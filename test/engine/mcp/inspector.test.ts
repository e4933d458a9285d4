/**
 * `warden mcp` driven by a client no one here wrote: the MCP Inspector's command-line mode
 * (`@modelcontextprotocol/inspector@0.15.0 --cli`),
 * running the README's server example. Each run starts and stops its own server; none may leave a
 * container behind.
 */
import { join } from "node:path";
import { execa } from "execa";
import { expect, it } from "vitest";
import { mcpToolsOf } from "../../../src/mcp/index.js";
import { buildProviderTools } from "../../../src/pipeline/index.js";
import { builtinTools } from "../../../src/tools/index.js";
import { describeEngine } from "../../helpers/engine.js";
import {
  containersLeft,
  EXAMPLE_CWD,
  REPO,
  readmeServerExample,
  testTenant,
} from "../../helpers/mcp-fixture.js";

const INSPECTOR = join(REPO, "node_modules/.bin/mcp-inspector");

/** Runs the Inspector CLI against the README's example with `method` args; returns its parsed JSON. */
async function inspect(tenant: string, method: string[]): Promise<Record<string, unknown>> {
  const example = readmeServerExample();
  const run = await execa(
    INSPECTOR,
    ["--cli", example.command, ...example.args, "--tenant", tenant, "--method", ...method],
    { cwd: EXAMPLE_CWD, timeout: 60_000 },
  );
  return JSON.parse(run.stdout) as Record<string, unknown>;
}

describeEngine("warden mcp with the MCP Inspector CLI", () => {
  it("tools/list gives providerTools' names, descriptions and schemas", async () => {
    const tenant = testTenant("inspector-list");
    const listed = await inspect(tenant, ["tools/list"]);
    expect(listed.tools).toEqual(mcpToolsOf({ providerTools: () => buildProviderTools(builtinTools()) }));
    expect(await containersLeft(tenant)).toEqual([]);
  });

  it("tools/call read returns the file; a refused bash call is isError naming the rule", async () => {
    const tenant = testTenant("inspector-call");
    const read = await inspect(tenant, [
      "tools/call",
      "--tool-name",
      "read",
      "--tool-arg",
      "path=src/greet.py",
      "limit=1",
    ]);
    expect(read).toEqual({
      content: [
        {
          type: "text",
          text: "def greet(name: str) -> str:\n\n[6 more lines in file. Use offset=2 to continue.]",
        },
      ],
      isError: false,
    });
    const refused = await inspect(tenant, [
      "tools/call",
      "--tool-name",
      "bash",
      "--tool-arg",
      "command=rm -rf src",
    ]);
    expect(refused.isError).toBe(true);
    expect(JSON.stringify(refused.content)).toContain("is denied by rule 'deny-rm' (operator policy)");
    expect(await containersLeft(tenant)).toEqual([]);
  });
});

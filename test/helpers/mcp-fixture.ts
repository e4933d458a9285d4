/**
 * Shared by the MCP engine tests: the README's server example (its `mcp-claude-code` snippet, with
 * `/path/to/warden` replaced by this clone), a tenant label per test, and a wait for a tenant's
 * containers to be gone.
 */
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import Docker from "dockerode";
import { docSnippet } from "./doc-snippets.js";

/** The repository root. */
export const REPO = resolve(dirname(fileURLToPath(import.meta.url)), "../..");

/** Where the README's example runs (its `--workspace .`). */
export const EXAMPLE_CWD = join(REPO, "examples/workspace");

/** The command and args of the README's `.mcp.json` snippet (`mcp-claude-code`), pointed at this clone. */
export function readmeServerExample(): { command: string; args: string[] } {
  const block = docSnippet("README.md", "mcp-claude-code");
  const server = JSON.parse(block.replaceAll("/path/to/warden", REPO)).mcpServers.warden as {
    command: string;
    args: string[];
  };
  return server;
}

/** The args of the README's Codex snippet (`mcp-codex`: `args = [...]` in the TOML block). */
export function readmeCodexArgs(): string[] {
  const toml = docSnippet("README.md", "mcp-codex");
  const args = /^args = (\[.*\])$/m.exec(toml)?.[1];
  if (!args) throw new Error("README.md has no Codex snippet");
  return JSON.parse(args.replaceAll("/path/to/warden", REPO)) as string[];
}

/** A fresh tenant label for one test (engine tests label sandboxes `test-…`). */
export function testTenant(name: string): string {
  return `test-mcp-${name}-${process.pid}-${Math.random().toString(36).slice(2, 8)}`;
}

/** The ids of containers labelled with `tenant`, running or not. */
export async function tenantContainers(tenant: string): Promise<string[]> {
  const list = await new Docker().listContainers({
    all: true,
    filters: { label: [`io.warden.tenant=${tenant}`] },
  });
  return list.map((c) => c.Id);
}

/**
 * Polls until `tenant` has no container (the server removes it while exiting); resolves [] then.
 * No deadline of its own (a busy engine is slow, not wrong): the calling test's timeout bounds it.
 */
export async function containersLeft(tenant: string): Promise<string[]> {
  let left = await tenantContainers(tenant);
  while (left.length > 0) {
    await new Promise((r) => setTimeout(r, 200));
    left = await tenantContainers(tenant);
  }
  return left;
}

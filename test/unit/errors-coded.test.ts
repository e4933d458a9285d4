/**
 * Every error src/ throws is a WardenError subclass with a stable code (AGENTS.md: Errors). A plain
 * `new Error(` in src/ fails this test unless it is listed below, each with why it can never reach a
 * user as a plain Error: an invariant only a programming error breaks, or a value that never leaves
 * as a thrown error (it is wrapped at a boundary, or becomes a tool result's text).
 */
import { readdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";

/** `<file>: <the text right after "new Error(">` → why it may stay plain. */
const ALLOWED: Record<string, string> = {
  'src/sandbox/channel/protocol/switchable.ts: "moveTo: the transport has not started or already moved"':
    "invariant: the channel calls moveTo once, after start; only a bug in the channel code reaches it",
  'src/sandbox/kubernetes/pod-channel.ts: "endedError before the helper ended"':
    "invariant of a private method, called only once the helper has ended",
  "src/sandbox/kubernetes/client.ts: ":
    "invariant: every path to a cluster awaits loadKubernetesClient() first (the message names that)",
  'src/policy/bash/parser.ts: "bash parser not loaded: await loadBashParser() first"':
    "invariant: evaluation awaits loadBashParser() before it parses (the message names that)",
  'src/policy/bash/parser.ts: "bash parser returned no tree"':
    "invariant: web-tree-sitter returns no tree only without a language or after a cancel or timeout, and warden sets none of them",
  'src/mcp/tool-server.ts: "The pipeline returned no result."':
    "invariant: the pipeline answers every call it is given with one result",
  "src/sandbox/kubernetes/request-deadline.ts: ":
    "never thrown as is: the exec stream's open fails with it, and fromKubeError (kubernetes/cluster.ts) makes it a SandboxError",
  "src/pipeline/stages.ts: `afterToolCall hook failed: ${errorText(err)}`":
    "never thrown: thrownResult makes it the call's isError result text",
  "src/session/spill-store.ts: String(err)":
    "never thrown as is: a non-Error failure value kept as the spill file's error, which its writer reports",
};

async function plainErrors(): Promise<string[]> {
  const found: string[] = [];
  for (const name of await readdir("src", { recursive: true })) {
    if (!name.endsWith(".ts")) continue;
    const path = join("src", name);
    const text = await readFile(path, "utf8");
    for (const m of text.matchAll(/\bnew Error\(([^\n]*)/g)) {
      const args = (m[1] ?? "").replace(/\)[^)]*$/, "").trim();
      found.push(`${path}: ${args}`);
    }
  }
  return found;
}

describe("errors thrown by src/", () => {
  it("are WardenError subclasses, but for the listed plain Errors, each with its reason", async () => {
    const unlisted = (await plainErrors()).filter((entry) => !(entry in ALLOWED));
    expect(unlisted).toEqual([]);
  });

  it("lists no plain Error that is gone (the allowlist stays exact)", async () => {
    const found = new Set(await plainErrors());
    expect(Object.keys(ALLOWED).filter((entry) => !found.has(entry))).toEqual([]);
  });
});

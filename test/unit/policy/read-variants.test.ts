/**
 * read opens another spelling of a name that does not exist (Pi 0.73.1's macOS variants: U+2019 for
 * "'", NFD, a narrow no-break space before AM/PM). The policy must judge the file read opens, not
 * only the name as given: a variant may be a link to a file a rule denies.
 */
import { describe, expect, it } from "vitest";
import type { BeforeToolCallContext } from "../../../src/pipeline/types.js";
import { createPolicyHook, parsePolicyText } from "../../../src/policy/index.js";
import type { AnyTool } from "../../../src/tools/types.js";
import { FakeSandbox } from "../../helpers/fake-sandbox.js";

const policy = {
  layers: [
    parsePolicyText(
      `
default: ask
rules:
  - { id: deny-secrets, decision: deny, tools: [read], paths: ["**/.env"], reason: secrets are never read }
  - { id: allow-workspace-read, decision: allow, tools: [read], paths: ["/workspace/**"] }
`,
      "operator.yaml",
    ),
  ],
};

function readCall(sandbox: FakeSandbox, path: string): BeforeToolCallContext {
  return {
    call: { id: "c1", name: "read", arguments: { path } },
    tool: { name: "read" } as AnyTool,
    args: { path },
    sandbox,
    sessionId: "s1",
  };
}

const hook = createPolicyHook({ policy, sessionId: "s1" });

describe("policy: read's other spellings of a name", () => {
  const sandbox = new FakeSandbox()
    .file("/workspace/.env", "SECRET=1\n")
    .file("/workspace/notes.txt", "hi\n")
    .symlink("/workspace/it\u2019s", ".env")
    .symlink("/workspace/cafe\u0301", ".env")
    .symlink("/workspace/Shot 9.41.00\u202fAM.png", ".env");

  it("judges the variant read would open: a link to a denied file is refused", async () => {
    for (const path of ["it's", "caf\u00e9", "Shot 9.41.00 AM.png"]) {
      const out = (await hook(readCall(sandbox, path))) as { block?: true; reason?: string } | undefined;
      expect([path, out?.block, out?.reason]).toEqual([
        path,
        true,
        "Tool call refused: read part '/workspace/.env' is denied by rule 'deny-secrets' (operator policy): secrets are never read. Nothing was run.",
      ]);
    }
  });

  it("a name that exists is judged alone; a variant of a name that exists is not looked up", async () => {
    const withBoth = new FakeSandbox()
      .file("/workspace/.env", "SECRET=1\n")
      .file("/workspace/it's", "plain\n")
      .symlink("/workspace/it\u2019s", ".env");
    expect(await hook(readCall(withBoth, "it's"))).toBeUndefined();
    expect(await hook(readCall(sandbox, "notes.txt"))).toBeUndefined();
  });
});

import { Type } from "typebox";
import { describe, expect, it } from "vitest";
import { compiledValidator, validateToolArguments } from "../../../src/pipeline/index.js";
import { createEditTool } from "../../../src/tools/edit.js";
import { echoTool } from "../../helpers/pipeline-fakes.js";

const editLike = echoTool({
  name: "edit",
  parameters: Type.Object({
    path: Type.String(),
    edits: Type.Array(Type.Object({ oldText: Type.String(), newText: Type.String() }), { minItems: 1 }),
  }),
});

describe("validateToolArguments", () => {
  it("accepts valid arguments and coerces a numeric string with Value.Convert, on a clone", () => {
    const args = { text: "a", times: "3" };
    const outcome = validateToolArguments(echoTool(), args);
    expect(outcome).toEqual({ ok: true, args: { text: "a", times: 3 } });
    expect(args.times).toBe("3");
  });

  it("lists every error as '  - path: message', missing fields appended to the path, then the arguments", () => {
    const args = { edits: [{ oldText: [1] }] };
    const outcome = validateToolArguments(editLike, args);
    expect(outcome.ok).toBe(false);
    if (outcome.ok) return;
    expect(outcome.message).toBe(
      [
        'Validation failed for tool "edit":',
        "  - path: must have required property 'path'",
        "  - edits.0.newText: must have required property 'newText'",
        "  - edits.0.oldText: must be string",
        "",
        "Received arguments:",
        '{\n  "edits": [\n    {\n      "oldText": [\n        1\n      ]\n    }\n  ]\n}',
      ].join("\n"),
    );
  });

  it("names the empty path 'root'", () => {
    const outcome = validateToolArguments(echoTool(), [1, 2]);
    expect(outcome).toEqual({
      ok: false,
      message:
        'Validation failed for tool "echo":\n  - root: must be object\n\nReceived arguments:\n[\n  1,\n  2\n]',
    });
  });

  it("treats arguments that arrive as a non-JSON string as a validation error", () => {
    const outcome = validateToolArguments(echoTool(), "{text: oops");
    expect(outcome.ok).toBe(false);
    if (outcome.ok) return;
    expect(
      outcome.message.startsWith(
        'Validation failed for tool "echo":\n  - root: arguments are not valid JSON (',
      ),
    ).toBe(true);
    expect(outcome.message.endsWith('\n\nReceived arguments:\n"{text: oops"')).toBe(true);
  });

  it("parses arguments that arrive as a JSON string", () => {
    expect(validateToolArguments(echoTool(), '{"text":"hi"}')).toEqual({ ok: true, args: { text: "hi" } });
  });

  it("compiles each schema once", () => {
    const tool = echoTool();
    expect(compiledValidator(tool.parameters)).toBe(compiledValidator(tool.parameters));
  });
});

describe("the edit tool's schema (Pi 0.73.1's, found by test/pi)", () => {
  it("rejects an edit entry with a property other than oldText and newText, as Pi's schema does", () => {
    const args = { path: "a.txt", edits: [{ oldText: "a", newText: "b", extra: 1 }] };
    const outcome = validateToolArguments(createEditTool(), args);
    expect(outcome.ok).toBe(false);
    if (outcome.ok) return;
    expect(outcome.message.split("\n\n")[0]).toBe(
      'Validation failed for tool "edit":\n  - edits.0.extra: schema is false\n  - edits.0: must not have additional properties',
    );
  });
});

/**
 * TypeBox schema of a policy file (YAML or JSON). See policies/README.md for the documented format.
 */
import { type Static, Type } from "typebox";
import { MAX_BASH_COMMAND_BYTES } from "../tools/index.js";
import { NetworkSectionSchema } from "./network-section.js";
import { SecretsSectionSchema } from "./secrets-section.js";
import { LAYER_NAMES, PROCESS_RULE_ACTIONS } from "./types.js";

const DecisionSchema = Type.Union([Type.Literal("allow"), Type.Literal("ask"), Type.Literal("deny")], {
  description: "allow | ask | deny",
});

/** One rule of a policy file's `rules:`. */
export const RuleSchema = Type.Object(
  {
    id: Type.String({ pattern: "^[A-Za-z0-9][A-Za-z0-9._:-]*$", description: "unique rule id" }),
    decision: DecisionSchema,
    tools: Type.Array(Type.String({ minLength: 1 }), { minItems: 1, description: "tool names, or *" }),
    commands: Type.Optional(Type.Array(Type.String({ minLength: 1 }), { minItems: 1 })),
    paths: Type.Optional(Type.Array(Type.String({ minLength: 1 }), { minItems: 1 })),
    reason: Type.Optional(Type.String()),
    effects: Type.Optional(
      Type.Array(Type.Union([Type.Literal("write"), Type.Literal("exec"), Type.Literal("network")]), {
        description: "for an allow rule with commands: the effects (commands/model.ts) it accepts",
      }),
    ),
    input: Type.Optional(
      Type.Array(Type.String({ minLength: 1 }), {
        minItems: 1,
        description: "process tool: programs (command names) whose process may be sent input",
      }),
    ),
    actions: Type.Optional(
      Type.Array(Type.Union(PROCESS_RULE_ACTIONS.map((a) => Type.Literal(a))), {
        minItems: 1,
        description: "process tool: the actions decided by name (output, list, wait, kill)",
      }),
    ),
  },
  { additionalProperties: false },
);

const TestSchema = Type.Object(
  {
    tool: Type.String({ minLength: 1 }),
    args: Type.Record(Type.String(), Type.Unknown()),
    expect: DecisionSchema,
    rule: Type.Optional(Type.String()),
    note: Type.Optional(Type.String()),
  },
  { additionalProperties: false },
);

/** The whole file. Unknown keys are errors (a typo must not silently drop a rule). */
export const PolicyFileSchema = Type.Object(
  {
    name: Type.Optional(Type.String()),
    description: Type.Optional(Type.String()),
    layer: Type.Optional(Type.Union(LAYER_NAMES.map((name) => Type.Literal(name)))),
    default: Type.Optional(DecisionSchema),
    nonInteractive: Type.Optional(Type.Boolean()),
    maxCommandBytes: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: MAX_BASH_COMMAND_BYTES,
        description: "longest bash command analysed, in UTF-8 bytes (default 8192)",
      }),
    ),
    rules: Type.Array(RuleSchema),
    tests: Type.Optional(Type.Array(TestSchema)),
    /** Allowed, asked and denied domains of the sandbox's network (network-section.ts). */
    network: Type.Optional(NetworkSectionSchema),
    /** Where each named secret may be sent (secrets-section.ts). */
    secrets: Type.Optional(SecretsSectionSchema),
  },
  { additionalProperties: false },
);

export type PolicyFile = Static<typeof PolicyFileSchema>;

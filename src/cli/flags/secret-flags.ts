/**
 * The secret flags of `warden exec`, `replay`, `run` and `mcp` (docs/secrets.md):
 * `--secret NAME=env:VAR` (the value of warden's environment variable VAR, read once at start) and
 * `--secret NAME=file:PATH` (the file's content, read at each use: rewriting the file rotates the
 * secret, removing it revokes it), repeatable; `--secret-env NAME=VAR` (the sandbox environment
 * variable holding the placeholder `{{NAME}}`; default NAME, empty: none) and
 * `--secret-file NAME=PATH` (an absolute path in the sandbox where a file holding the placeholder is
 * written). Where a secret may be sent comes from the policy files' `secrets:` sections only
 * (src/policy/secrets-section.ts), strictest layer wins; a secret no layer binds is an error. No
 * message ever holds a value: a `--secret` argument is echoed only up to its source's kind.
 */
import { posix, resolve } from "node:path";
import type { Command } from "commander";
import {
  DEFAULT_SECRET_PORTS,
  decideConnection,
  type NetworkOptions,
  type NetworkRule,
  SECRET_NAME,
  type SecretBinding,
  type SessionSecret,
} from "../../egress/index.js";
import { InvalidArgumentError } from "../../errors.js";
import { effectiveSecretBindings, hostIntersection, type PolicyLayer } from "../../policy/index.js";
import { secretUseLine } from "../output/secret-lines.js";
import { envSecretValue, fileSecretValue } from "./secret-sources.js";

/** The parsed secret flags, one string per occurrence. */
export interface SecretFlags {
  secret?: string[];
  secretEnv?: string[];
  secretFile?: string[];
}

/** One `--secret`, its syntax checked: the name, where its value comes from, where its placeholder goes. */
interface SecretSpec {
  name: string;
  source: { kind: "env"; variable: string } | { kind: "file"; path: string };
  /** `--secret-env`: the sandbox variable holding the placeholder, or false for none. Default: the name. */
  env?: string | false;
  /** `--secret-file`: the absolute sandbox path of a file holding the placeholder. */
  file?: string;
}

const collect = (value: string, previous: string[] = []) => [...previous, value];
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
const NEVER_ON_COMMAND_LINE =
  "the value itself never goes on the command line, where other processes can read it";

/** Adds the secret flags to `command`. */
export function addSecretFlags(command: Command): Command {
  return command
    .option(
      "--secret <NAME=SOURCE>",
      "give the session secret NAME, which the sandbox sees only as the placeholder {{NAME}} (in env var NAME) and the egress gateway replaces in the headers of requests to the hosts a policy file's secrets: section binds it to; SOURCE is env:VAR (read once at start) or file:PATH (read at each use); repeatable. Needs --allow-net",
      collect,
    )
    .option(
      "--secret-env <NAME=VAR>",
      "the sandbox environment variable holding secret NAME's placeholder (default NAME; empty: none)",
      collect,
    )
    .option(
      "--secret-file <NAME=PATH>",
      "also write secret NAME's placeholder into a file at this absolute path in the sandbox (under /tmp, HOME or /workspace)",
      collect,
    );
}

/** `NAME=rest` of one flag value, or undefined when there is no `=` or the name is not SECRET_NAME. */
function splitNamed(value: string): { name: string; rest: string } | undefined {
  const eq = value.indexOf("=");
  const name = value.slice(0, Math.max(eq, 0));
  return eq > 0 && SECRET_NAME.test(name) ? { name, rest: value.slice(eq + 1) } : undefined;
}

function parseSecret(value: string, index: number): SecretSpec {
  const named = splitNamed(value);
  if (!named)
    throw new InvalidArgumentError(
      `--secret #${index + 1} must be NAME=env:VAR or NAME=file:PATH with NAME upper-case letters, digits and _, starting with a letter (e.g. --secret GITHUB_TOKEN=env:GITHUB_TOKEN); ${NEVER_ON_COMMAND_LINE}.`,
    );
  const { name, rest } = named;
  if (rest.startsWith("env:")) {
    const variable = rest.slice(4);
    if (!ENV_NAME.test(variable))
      throw new InvalidArgumentError(
        `--secret ${name}=env:…: after env: comes the name of an environment variable of warden's (letters, digits and _, not starting with a digit).`,
      );
    return { name, source: { kind: "env", variable } };
  }
  if (rest.startsWith("file:") && rest.length > 5)
    return { name, source: { kind: "file", path: resolve(rest.slice(5)) } };
  throw new InvalidArgumentError(
    `--secret ${name}=…: the source must be env:VAR (a variable of warden's environment, read once at start) or file:PATH (a file read at each use); ${NEVER_ON_COMMAND_LINE}.`,
  );
}

/** The placeholder destination flags (`--secret-env`, `--secret-file`), set on `specs`. */
function applyDestinations(specs: SecretSpec[], flags: SecretFlags): void {
  const byName = new Map(specs.map((s) => [s.name, s]));
  const seen = new Map<string, string>();
  for (const [flag, values] of [
    ["--secret-env", flags.secretEnv ?? []],
    ["--secret-file", flags.secretFile ?? []],
  ] as const) {
    for (const [i, value] of values.entries()) {
      const named = splitNamed(value);
      const spec = named && byName.get(named.name);
      // The text before `=` is echoed only when it is a name (it could be a value typed by mistake).
      if (!named || !spec)
        throw new InvalidArgumentError(
          `${named ? `${flag} ${named.name}=…` : `${flag} #${i + 1}`}: the name before = must be one a --secret gives (${[...byName.keys()].join(", ") || "none given"}).`,
        );
      if (flag === "--secret-env") {
        if (spec.env !== undefined) throw new InvalidArgumentError(`${flag} ${spec.name} is given twice.`);
        if (named.rest !== "" && !ENV_NAME.test(named.rest))
          throw new InvalidArgumentError(
            `${flag} ${spec.name}=…: VAR must be an environment variable name (letters, digits and _, not starting with a digit), or empty for none.`,
          );
        spec.env = named.rest === "" ? false : named.rest;
      } else {
        if (spec.file !== undefined) throw new InvalidArgumentError(`${flag} ${spec.name} is given twice.`);
        const path = named.rest;
        if (!path.startsWith("/") || posix.normalize(path) !== path || path.endsWith("/"))
          throw new InvalidArgumentError(
            `${flag} ${spec.name}=…: the path in the sandbox must be absolute and normal (no ., .. or trailing /), e.g. /tmp/secrets/${spec.name} (under /tmp, HOME or /workspace: the root is read-only).`,
          );
        spec.file = path;
      }
    }
  }
  for (const spec of specs) {
    for (const [kind, where] of [
      ["environment variable", spec.env === undefined ? spec.name : spec.env],
      ["file", spec.file],
    ] as const) {
      if (where === undefined || where === false) continue;
      const other = seen.get(`${kind} ${where}`);
      if (other)
        throw new InvalidArgumentError(
          `secrets ${other} and ${spec.name} both put their placeholder in the ${kind} ${where}; give each its own with --secret-env or --secret-file.`,
        );
      seen.set(`${kind} ${where}`, spec.name);
    }
  }
}

/**
 * The `--secret` flags, their syntax checked (nothing is read yet): one SecretSpec per flag, with
 * the destinations of `--secret-env` and `--secret-file`. Throws InvalidArgumentError for a value
 * that is not NAME=env:VAR or NAME=file:PATH (a relative PATH is resolved against the working
 * directory), a name given twice, a destination flag naming no `--secret`, or two secrets sharing
 * a destination.
 */
export function parseSecretFlags(flags: SecretFlags): SecretSpec[] {
  const specs = (flags.secret ?? []).map(parseSecret);
  const names = new Set<string>();
  for (const spec of specs) {
    if (names.has(spec.name))
      throw new InvalidArgumentError(`--secret ${spec.name} is given twice; give each secret once.`);
    names.add(spec.name);
  }
  applyDestinations(specs, flags);
  return specs;
}

/** The bindings of `name` over the policy layers, or an InvalidArgumentError saying why there are none. */
function bindingsOf(name: string, layers: readonly PolicyLayer[]): SecretBinding[] {
  const sections = layers.filter((l) => l.secrets !== undefined);
  const bindings = effectiveSecretBindings(
    sections.map((l) => l.secrets ?? {}),
    name,
  );
  if (bindings.length > 0) return bindings;
  if (sections.length === 0)
    throw new InvalidArgumentError(
      `--secret ${name}: no policy file binds it to hosts; add it to the secrets: section of a policy file you pass with --policy, e.g. secrets: { ${name}: { hosts: [api.example.com] } }.`,
    );
  const withholding = sections.find((l) => !Object.hasOwn(l.secrets ?? {}, name));
  if (withholding)
    throw new InvalidArgumentError(
      `--secret ${name}: the secrets: section of ${withholding.file} (${withholding.layer} layer) does not name it, so that layer withholds it; bind it there too.`,
    );
  throw new InvalidArgumentError(
    `--secret ${name}: the policy layers that bind it (${sections.map((l) => l.file).join(", ")}) share no request it could be sent on (host, port, method, path prefix and header); a lower layer can only narrow a higher one's binding.`,
  );
}

/** True when the network lets through (or asks about) some host and port of a binding. */
function reachable(binding: SecretBinding, rules: readonly NetworkRule[]): boolean {
  return binding.hosts.some((host) =>
    (binding.ports ?? DEFAULT_SECRET_PORTS).some((port) =>
      rules.some((r) => {
        if (r.decision === "deny" || !r.ports.includes(port)) return false;
        const both = hostIntersection(r.host, host);
        return (
          both !== undefined &&
          (both.startsWith("*.") || decideConnection(rules, both, port).decision !== "deny")
        );
      }),
    ),
  );
}

/**
 * `network` with the session's secrets (NetworkOptions.secrets) and a `warden: secret …` stderr
 * line per request that carried a placeholder (onSecretUse); `network` as it is without `--secret`.
 * Each secret's bindings are the policy layers' (effectiveSecretBindings); its value source is
 * checked now (secret-sources.ts: a variable set and non-empty, a file readable, a value a header
 * can carry). Rejects with
 * InvalidArgumentError when a secret is given without network (`network` undefined), when no layer
 * binds it (naming the layer that withholds it, if one does), or when the network lets through
 * none of its bound hosts; with the syntax errors of parseSecretFlags. No message holds a value.
 */
export async function withSessionSecrets(
  network: NetworkOptions | undefined,
  flags: SecretFlags,
  layers: readonly PolicyLayer[],
  env: NodeJS.ProcessEnv = process.env,
): Promise<NetworkOptions | undefined> {
  const specs = parseSecretFlags(flags);
  if (specs.length === 0) return network;
  if (network?.mode !== "allowlist")
    throw new InvalidArgumentError(
      "--secret needs network access: the egress gateway replaces placeholders on the requests it lets through. Allow the secret's hosts with --allow-net (e.g. --allow-net api.github.com:443) or a policy file's network: section.",
    );
  const secrets: SessionSecret[] = [];
  for (const spec of specs) {
    const bindings = bindingsOf(spec.name, layers);
    if (!bindings.some((b) => reachable(b, network.rules))) {
      const hosts = bindings.flatMap((b) =>
        b.hosts.map((h) => `${h}:${(b.ports ?? DEFAULT_SECRET_PORTS).join("+")}`),
      );
      throw new InvalidArgumentError(
        `--secret ${spec.name}: the network lets through none of the hosts it is bound to (${hosts.join(", ")}); allow them, e.g. --allow-net ${hosts[0]}.`,
      );
    }
    const flag = `--secret ${spec.name}=${spec.source.kind}:${spec.source.kind === "env" ? spec.source.variable : spec.source.path}`;
    const value =
      spec.source.kind === "env"
        ? envSecretValue(flag, spec.source.variable, env)
        : await fileSecretValue(flag, spec.source.path);
    secrets.push({
      name: spec.name,
      bindings,
      ...(spec.env !== undefined ? { env: spec.env } : {}),
      ...(spec.file !== undefined ? { file: spec.file } : {}),
      value,
    });
  }
  return { ...network, secrets, onSecretUse: (r) => process.stderr.write(secretUseLine(r)) };
}

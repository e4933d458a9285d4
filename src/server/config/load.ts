/** Reads the `warden serve` configuration file (YAML or JSON) and resolves it (resolve.ts). */

import { readFile } from "node:fs/promises";
import { dirname, resolve } from "node:path";
import { parse as parseYaml } from "yaml";
import { InvalidArgumentError } from "../../errors.js";
import { resolveServerConfig } from "./resolve.js";
import type { ServerConfig } from "./types.js";

/**
 * Reads a config file: `.json` is JSON, anything else YAML (a superset of JSON).
 * Throws InvalidArgumentError for an unreadable, unparsable or invalid file.
 */
export async function loadServerConfig(path: string): Promise<ServerConfig> {
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch (err) {
    throw new InvalidArgumentError(
      `Cannot read server config '${path}': ${(err as Error).message}. Pass --config with a readable file.`,
    );
  }
  let parsed: unknown;
  try {
    parsed = path.endsWith(".json") ? JSON.parse(text) : parseYaml(text);
  } catch (err) {
    throw new InvalidArgumentError(`Server config '${path}' does not parse: ${(err as Error).message}`);
  }
  return resolveServerConfig(parsed, dirname(resolve(path)), path);
}

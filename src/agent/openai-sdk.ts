/**
 * The openai SDK, loaded on demand: it is an optional peer dependency that only `warden run` needs
 * (OPTIONAL_FEATURES.run), so nothing imports it statically (the CLI's other commands load agent/
 * for its terminal rendering). OpenAIChatModel and withRetries await loadOpenAI() before they use it.
 */
import type * as OpenAISdk from "openai";
import { importOptional, OPTIONAL_FEATURES } from "../util/index.js";

/** The openai package's exports. */
export type OpenAIModule = typeof OpenAISdk;

let loaded: OpenAIModule | undefined;

/**
 * Loads the openai package (once; later calls resolve the same module). Rejects PackageMissingError
 * (code PACKAGE_MISSING, with the install command) when it is not installed.
 */
export async function loadOpenAI(): Promise<OpenAIModule> {
  loaded ??= await importOptional(OPTIONAL_FEATURES.run, () => import("openai"));
  return loaded;
}

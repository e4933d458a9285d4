/** The OpenAPI document without a running server, for `npm run openapi` and the staleness test. */

import { CONFIG_DEFAULTS } from "../config/index.js";
import { buildApp } from "./app.js";
import type { App, ServerContext } from "./route-context.js";

/** The document of every route of `buildApp`, from an app that is built, made ready and closed again. */
export async function openApiDocument(): Promise<Record<string, unknown>> {
  // Routes read the context only while answering requests; the document needs none of it.
  const app: App = buildApp({
    config: { ...CONFIG_DEFAULTS, tenants: [] },
  } as unknown as ServerContext);
  await app.ready();
  const doc = app.swagger() as unknown as Record<string, unknown>;
  await app.close();
  return doc;
}

/** The document as committed in docs/openapi.json: two-space JSON and a final newline. */
export async function openApiText(): Promise<string> {
  return `${JSON.stringify(await openApiDocument(), null, 2)}\n`;
}

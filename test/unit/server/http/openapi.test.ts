/**
 * The OpenAPI document: valid OpenAPI 3.1 by a maintained validator (@seriousme/openapi-schema-validator),
 * covering every route, with bearer auth on /v1, and the committed docs/openapi.json up to date
 * (this test is how CI fails on a stale copy: `npm run openapi` rewrites it).
 */
import { readFile } from "node:fs/promises";
import { Validator } from "@seriousme/openapi-schema-validator";
import { describe, expect, it } from "vitest";
import { CONFIG_DEFAULTS } from "../../../../src/server/config/index.js";
import { buildApp } from "../../../../src/server/http/app.js";
import { openApiDocument, openApiText } from "../../../../src/server/http/openapi-document.js";
import type { ServerContext } from "../../../../src/server/http/route-context.js";

describe("OpenAPI document", () => {
  it("is valid OpenAPI 3.1", async () => {
    const validator = new Validator();
    const outcome = await validator.validate(await openApiDocument());
    expect(outcome.errors ?? []).toEqual([]);
    expect(outcome.valid).toBe(true);
    expect(validator.version).toBe("3.1");
  });

  it("documents every route, /v1 routes needing the bearer key", async () => {
    const doc = (await openApiDocument()) as {
      paths: Record<string, Record<string, { security?: unknown; summary?: string }>>;
    };
    const routes = Object.entries(doc.paths).flatMap(([path, ops]) =>
      Object.keys(ops).map((method) => `${method.toUpperCase()} ${path}`),
    );
    expect(routes).toEqual(
      expect.arrayContaining([
        "GET /healthz",
        "GET /openapi.json",
        "POST /v1/sessions",
        "GET /v1/sessions/{id}",
        "DELETE /v1/sessions/{id}",
        "POST /v1/sessions/{id}/tool-calls",
        "GET /v1/sessions/{id}/workspace",
        "GET /v1/sessions/{id}/changes",
        "GET /v1/approvals",
        "POST /v1/approvals/{id}",
        "GET /v1/tools",
      ]),
    );
    expect(doc.paths["/v1/sessions"]?.post?.security).toEqual([{ bearer: [] }]);
    expect(doc.paths["/healthz"]?.get?.security).toBeUndefined();
    for (const [path, ops] of Object.entries(doc.paths)) {
      for (const [method, op] of Object.entries(ops)) expect(op.summary, `${method} ${path}`).toBeTruthy();
    }
  });

  it("docs/openapi.json is the generated document (run `npm run openapi` after changing a route)", async () => {
    const committed = await readFile(new URL("../../../../docs/openapi.json", import.meta.url), "utf8");
    expect(committed).toBe(await openApiText());
  });

  it("is served unauthenticated at GET /openapi.json", async () => {
    const app = buildApp({ config: { ...CONFIG_DEFAULTS, tenants: [] } } as unknown as ServerContext);
    const response = await app.inject({ method: "GET", url: "/openapi.json" });
    await app.close();
    expect(response.statusCode).toBe(200);
    expect(response.json()).toEqual(await openApiDocument());
  });
});

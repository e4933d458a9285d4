import { readFileSync } from "node:fs";
import { expect, it } from "vitest";
import { WARDEN_VERSION } from "../../src/cli/version.js";

it("`warden --version` prints package.json's version", () => {
  const pkg = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8"));
  expect(WARDEN_VERSION).toBe(pkg.version);
});

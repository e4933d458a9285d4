import { readFileSync } from "node:fs";
import { afterEach, expect, it, vi } from "vitest";

const argv = process.argv;
afterEach(() => {
  process.argv = argv;
  vi.restoreAllMocks();
});

it("`warden --version` prints package.json's version and exits 0", async () => {
  const pkg = JSON.parse(readFileSync(new URL("../../../package.json", import.meta.url), "utf8"));
  const out: string[] = [];
  vi.spyOn(process.stdout, "write").mockImplementation((chunk) => out.push(String(chunk)) > 0);
  const exit = vi.spyOn(process, "exit").mockImplementation((() => undefined) as never);
  process.argv = ["node", "warden", "--version"];
  await import("../../../src/cli/main.js");
  expect(out.join("")).toBe(`${pkg.version}\n`);
  expect(exit).toHaveBeenCalledWith(0);
});

import { defineConfig } from "vitest/config";

// Three projects: pure unit tests, tests against a real Docker engine (slower, serial per file), and
// the package as installed from `npm pack` (builds, packs and installs: minutes, no engine).
export default defineConfig({
  test: {
    projects: [
      {
        test: {
          name: "unit",
          include: ["test/unit/**/*.test.ts"],
          testTimeout: 10_000,
        },
      },
      {
        test: {
          name: "engine",
          include: ["test/engine/**/*.test.ts"],
          testTimeout: 120_000,
          hookTimeout: 180_000,
          // 2 cores: a couple of files at a time keeps the engine responsive. A project with its
          // own maxWorkers needs its own group (vitest 4), which also runs it after the unit tests.
          maxWorkers: 2,
          sequence: { groupOrder: 1 },
        },
      },
      {
        test: {
          name: "package",
          include: ["test/package/**/*.test.ts"],
          testTimeout: 600_000,
        },
      },
    ],
  },
});

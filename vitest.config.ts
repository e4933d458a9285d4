import { defineConfig } from "vitest/config";

// Two projects: pure unit tests, and tests against a real Docker engine (slower, serial per file).
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
    ],
  },
});

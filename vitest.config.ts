import { defineConfig } from "vitest/config";

// Three projects: pure unit tests, tests against a real Docker engine (slower, serial per file), and
// the package as installed from `npm pack` (builds, packs and installs: minutes, no engine).
// No assertion waits on a wall-clock budget that a busy machine can break (`npm run test:load` runs
// the tests beside a CPU hog): a test is bounded by its project's generous timeout, and expect.poll
// by a default just under it (a poll's own message, with the last value, beats the test's timeout).
export default defineConfig({
  test: {
    projects: [
      {
        test: {
          name: "unit",
          include: ["test/unit/**/*.test.ts"],
          testTimeout: 60_000,
          hookTimeout: 60_000,
          expect: { poll: { timeout: 50_000, interval: 20 } },
        },
      },
      {
        test: {
          name: "engine",
          include: ["test/engine/**/*.test.ts"],
          testTimeout: 120_000,
          hookTimeout: 180_000,
          expect: { poll: { timeout: 110_000, interval: 50 } },
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

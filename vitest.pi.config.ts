import { defineConfig } from "vitest/config";

// `npm run test:pi`: the differential suite against the real Pi (test/pi), kept out of `npm test`.
// It needs a Docker engine and the sandbox image; under CI=true it fails rather than skips without them.
export default defineConfig({
  test: {
    name: "pi",
    include: ["test/pi/**/*.test.ts"],
    testTimeout: 1_200_000,
    hookTimeout: 1_200_000,
    fileParallelism: false,
  },
});

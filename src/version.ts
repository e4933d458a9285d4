/** warden's version, as in package.json (test/unit/cli/version.test.ts keeps the two equal). */
export const WARDEN_VERSION = "0.1.0";

/**
 * bin/warden.js refuses a Node older than package.json's engines before loading anything else, in
 * its own words (exit 2, the fix named), instead of a dependency failing in its own. The old Node is
 * this one with process.versions.node redefined by an --import preload.
 */
import { spawnSync } from "node:child_process";
import { resolve } from "node:path";
import { describe, expect, it } from "vitest";

const BIN = resolve(import.meta.dirname, "../../../bin/warden.js");

function wardenOn(version: string | undefined) {
  const preload = `data:text/javascript,Object.defineProperty(process.versions,"node",{value:"${version}"})`;
  const args = version === undefined ? [BIN, "--version"] : ["--import", preload, BIN, "--version"];
  return spawnSync(process.execPath, args, { encoding: "utf8" });
}

describe("bin/warden.js on an unsupported Node", () => {
  it("exits 2 naming the minimum, the running version and the fix, for 20, 21 and 22.11", () => {
    for (const version of ["20.19.5", "21.7.3", "22.11.0"]) {
      const r = wardenOn(version);
      expect({ status: r.status, stdout: r.stdout, stderr: r.stderr }).toEqual({
        status: 2,
        stdout: "",
        stderr:
          `warden: needs Node.js 22.12.0 or newer; this is Node.js ${version}. Install Node.js 24 (LTS) or 26 and run warden with it ` +
          '(in a clone: export PATH="$(bash scripts/ensure-node.sh 24):$PATH").\n',
      });
    }
  });

  it("lets 22.12.0, 23 and this Node through the check", () => {
    for (const version of ["22.12.0", "23.0.0", undefined]) {
      expect(wardenOn(version).stderr).not.toContain("warden: needs Node.js");
    }
  });
});

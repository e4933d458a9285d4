/**
 * Package installs in a session with network (docs-pending/pkg.md): the image's plain
 * `pip install` and `npm install`, run by the bash tool as a model would, fetch from an allowed
 * package index and registry (the testbed's pypi.test and npm.test, through the session's gateway)
 * into the session's own writable places: pip's user install into HOME (a tmpfs of the sandbox's
 * uid), npm's package into the working directory and its cache into HOME. The root stays
 * read-only, and another session starts without any of it. Runs with $WARDEN_TEST_IMAGE when set.
 */
import { afterAll, beforeAll, expect, it } from "vitest";
import type { Session } from "../../../src/session/index.js";
import { createTestSession } from "../../helpers/backend.js";
import { describeEngine } from "../../helpers/engine.js";
import { leftovers, testTenant } from "../../helpers/sandbox-fixture.js";
import { type EgressTestbed, startEgressTestbed } from "./testbed.js";

const tenant = testTenant("packages");

/** The commands docs-pending/pkg.md shows, with the testbed's hosts. */
const PIP_INSTALL = "pip install --index-url https://pypi.test/simple/ tinypkg";
const NPM_INSTALL = "npm install --registry https://npm.test/npm/ tinynpm";

describeEngine("package installs in a session with network", () => {
  let bed: EgressTestbed;
  let session: Session;
  let calls = 0;
  /** Runs `command` with the session's bash tool; resolves its text and whether it failed. */
  const bash = async (s: Session, command: string) => {
    const [result] = await s.runToolCalls([{ id: `c${++calls}`, name: "bash", arguments: { command } }]);
    const text = (result?.content ?? []).map((c) => (c.type === "text" ? c.text : "")).join("");
    return { text, isError: result?.isError === true };
  };

  beforeAll(async () => {
    bed = await startEgressTestbed();
    session = await createTestSession({
      tenant,
      toolSelection: { tools: ["bash"] },
      sandbox: {
        ttlMs: 180_000,
        network: {
          mode: "allowlist",
          rules: [
            { host: "pypi.test", ports: [443], decision: "allow" },
            { host: "npm.test", ports: [443], decision: "allow" },
          ],
          egressNetworks: [bed.publicNetwork],
          caBundlePath: bed.caBundlePath,
        },
      },
    });
  }, 180_000);

  afterAll(async () => {
    await session?.close();
    await bed?.dispose();
    expect(await leftovers(tenant)).toEqual([]);
  });

  it("pip install from an allowed index installs into HOME, and python imports it", async () => {
    const install = await bash(session, PIP_INSTALL);
    expect(install.isError, install.text).toBe(false);
    expect(install.text).toContain("Successfully installed tinypkg-0.1");
    const imported = await bash(
      session,
      "python3 -c 'import tinypkg; print(tinypkg.VALUE, tinypkg.__file__)'",
    );
    expect(imported.text).toBe("42 /home/sandbox/.local/lib/python3.11/site-packages/tinypkg/__init__.py\n");
    // The index was reached through the gateway, by its name.
    expect(await bed.hostLog("public", "requests")).toContain("pypi.test /simple/tinypkg/");
  }, 120_000);

  it("npm install from an allowed registry installs into the working directory, and node requires it", async () => {
    const install = await bash(session, `mkdir -p /workspace/app && cd /workspace/app && ${NPM_INSTALL}`);
    expect(install.isError, install.text).toBe(false);
    expect(install.text).toMatch(/added 1 package/);
    const required = await bash(
      session,
      "cd /workspace/app && node -e 'console.log(require(\"tinynpm\").value)' && ls ~/.npm/_cacache | grep -c .",
    );
    expect(required.text.split("\n")[0]).toBe("42");
    expect(await bed.hostLog("public", "requests")).toContain("npm.test /npm/tinynpm/-/tinynpm-1.0.0.tgz");
  }, 120_000);

  it("HOME is the session's own size-limited tmpfs, and the root stays read-only", async () => {
    const r = await bash(
      session,
      "stat -f -c %T ~; stat -c '%u %a' ~; id -u; df -B1 --output=size ~ | tail -n 1; " +
        "touch /usr/local/lib/x 2>&1 | sed 's/.*: //'",
    );
    const [fsType, owner, uid, size, root] = r.text.split("\n");
    expect([fsType, owner, size?.trim(), root]).toEqual([
      "tmpfs",
      `${uid} 700`,
      String(64 * 1024 * 1024),
      "Read-only file system",
    ]);
  });

  it("another session starts without the first one's packages", async () => {
    const other = await createTestSession({
      tenant,
      sandbox: { ttlMs: 60_000 },
      toolSelection: { tools: ["bash"] },
    });
    try {
      const r = await bash(
        other,
        "ls -A ~ | wc -l; python3 -c 'import tinypkg' 2>&1 | tail -n 1; ls /workspace/app 2>&1 | sed 's/.*: //'",
      );
      expect(r.text).toBe("0\nModuleNotFoundError: No module named 'tinypkg'\nNo such file or directory\n");
    } finally {
      await other.close();
    }
  });
});

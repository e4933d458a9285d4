/**
 * Environment variables set at session creation over HTTP, against a real `warden serve` with a
 * warm pool: cold and pooled sessions see them, a bad name is a 400, the host's environment never
 * leaks. On both backends (test/helpers/backend.ts).
 */
import { afterAll, beforeAll, expect, it } from "vitest";
import { InvalidArgumentError, WardenClient } from "../../../src/client/index.js";
import { describeBackend } from "../../helpers/backend.js";
import { type ServedTenants, serveTenants } from "../../helpers/serve-tenants.js";

describeBackend("session environment variables", () => {
  let served: ServedTenants;
  let client: WardenClient;
  beforeAll(async () => {
    // In the server's own environment: a session must never see it.
    process.env.WARDEN_TEST_HOST_ONLY = "host-value";
    served = await serveTenants(`test-env-${process.pid}`, { warmPool: { size: 1 } });
    delete process.env.WARDEN_TEST_HOST_ONLY;
    client = new WardenClient({ baseUrl: served.url, apiKey: served.keys.main });
  });
  afterAll(async () => {
    await served?.stop();
  });

  const echo = async (id: string) => {
    const [r] = await client.runToolCalls(id, [
      {
        id: "e",
        name: "bash",
        // biome-ignore lint/suspicious/noTemplateCurlyInString: a shell parameter expansion
        arguments: { command: 'echo "$GREETING|$HOME|${WARDEN_TEST_HOST_ONLY:-unset}"' },
      },
    ]);
    return r?.content.map((c) => (c.type === "text" ? c.text : "")).join("");
  };

  it("every command of a session sees its variables, with the warm pool on", async () => {
    const cold = await client.createSession({ env: { GREETING: "hello env" } });
    expect(await echo(cold.id)).toBe("hello env|/home/sandbox|unset\n");
    // The first copy-mode session starts filling the pool for this key: the next may be claimed from it.
    const pooled = await client.createSession({ env: { GREETING: "second" } });
    expect(await echo(pooled.id)).toBe("second|/home/sandbox|unset\n");
    const plain = await client.createSession();
    expect(await echo(plain.id)).toBe("|/home/sandbox|unset\n");
    for (const s of [cold, pooled, plain]) await client.deleteSession(s.id);
  });

  it("a reserved or malformed name is a 400 naming it, before any container starts", async () => {
    const err = await client.createSession({ env: { PATH: "/tmp" } }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(InvalidArgumentError);
    expect((err as Error).message).toContain("env.PATH is reserved");
    const bad = await client.createSession({ env: { "A-B": "x" } }).catch((e: unknown) => e);
    expect((bad as Error).message).toBe("env.A-B: a variable name is [A-Za-z_][A-Za-z0-9_]*.");
    // Set for the whole session, this made `git status` (allowed as read-only) run a command.
    const hook = await client
      .createSession({ env: { GIT_CONFIG_COUNT: "1", GIT_CONFIG_KEY_0: "core.fsmonitor" } })
      .catch((e: unknown) => e);
    expect(hook).toBeInstanceOf(InvalidArgumentError);
    expect((hook as Error).message).toBe(
      "env.GIT_CONFIG_COUNT changes which program a command runs or what it loads (as GIT_*, CDPATH, PAGER and RIPGREP_CONFIG_PATH do), and the policy judges commands without the session's variables: a session may not set it. Set it in the command itself, where the policy sees it.",
    );
    expect(await client.listSessions()).toEqual([]);
  });
});

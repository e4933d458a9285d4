/**
 * docs/network.md "Try it offline: a test host of your own", run as written (test/helpers/doc-shell.ts:
 * bash, `warden` = this checkout's bin/warden.js) with three words replaced so parallel runs and the
 * host's own traffic are safe: the subnet by a free /27 of 192.0.2.0/24 or 198.51.100.0/24
 * (test/helpers/test-network.ts: it overlaps no route, interface address, engine network or
 * address the host resolves; never 203.0.113.0/24, where the package registries resolve here), and
 * the network and container names by unique ones. The allowed fetch prints the exact body, the
 * unlisted name is refused with the line the doc shows and never reaches the server, and the doc's
 * clean-up leaves no network or container (the test removes them by name whatever happens). The
 * same recipe on a private subnet (a /27 of 172.29.0.0/16) is refused by address, as the doc says.
 * Needs `npm run build` and the images of `npm run setup`.
 */
import { randomBytes } from "node:crypto";
import { afterAll, expect, it } from "vitest";
import { getDocker } from "../../../src/sandbox/index.js";
import { containersWith } from "../../helpers/agent-fixture.js";
import { checkoutLikeDir, type DocShellResult, runDocShell } from "../../helpers/doc-shell.js";
import { docSnippet } from "../../helpers/doc-snippets.js";
import { describeEngine } from "../../helpers/engine.js";
import { SubnetTakenError, withFreeSubnet } from "../../helpers/test-network.js";

/** The words of the doc's blocks the test replaces. */
const DOC_SUBNET = "198.51.100.0/24";
const DOC_NETWORK = "warden-try";
const DOC_CONTAINER = `${DOC_NETWORK}-web`;
const slash27s = (net: string) => Array.from({ length: 8 }, (_, i) => `${net}.${i * 32}/27`);
/** Documentation ranges the gateway does not refuse (never 203.0.113.0/24: the registries resolve there). */
const PUBLIC_CANDIDATES = ["192.0.2", "198.51.100"].flatMap(slash27s);
/** /27s of 172.29.0.0/16, inside RFC 1918's 172.16.0.0/12, which the gateway refuses. */
const PRIVATE_CANDIDATES = Array.from({ length: 8 }, (_, i) => `172.29.${64 + i * 8}.0/27`);

const tenant = `test-docs-nethost-${process.pid}`;
const docker = getDocker();

/** A network name and its container's, unique to this run. */
function names() {
  const network = `warden-test-try-${randomBytes(4).toString("hex")}`;
  return { network, container: `${network}-web` };
}
type Names = ReturnType<typeof names>;
const made: Names[] = [];

/** The doc's text with the subnet and names replaced (the container's name derives from the network's). */
const localized = (text: string, subnet: string, n: Names) =>
  text.replaceAll(DOC_SUBNET, subnet).replaceAll(DOC_NETWORK, n.network);

/** Removes the container and network by name; absent ones are fine. */
async function removeByName(n: Names): Promise<void> {
  await docker
    .getContainer(n.container)
    .remove({ force: true })
    .catch(() => {});
  await docker
    .getNetwork(n.network)
    .remove()
    .catch(() => {});
}

/** The engine's containers (any state) and networks named exactly like `n`'s. */
async function leftOver(n: Names): Promise<string[]> {
  const containers = await docker.listContainers({ all: true, filters: { name: [n.container] } });
  const networks = await docker.listNetworks({ filters: { name: [n.network] } });
  return [
    ...containers.flatMap((c) => c.Names.map((x) => x.replace(/^\//, ""))).filter((x) => x === n.container),
    ...networks.map((x) => x.Name).filter((x) => x === n.network),
  ];
}

/** Runs `sh -c script` in the test host; resolves its exit code. */
async function execExitCode(n: Names, script: string): Promise<number | null> {
  const exec = await docker
    .getContainer(n.container)
    .exec({ Cmd: ["sh", "-c", script], AttachStdout: true, AttachStderr: true });
  const stream = await exec.start({ hijack: true, stdin: false });
  stream.resume();
  await new Promise((r) => stream.on("end", r));
  return (await exec.inspect()).ExitCode;
}

/** The requests the test host logged (python's http.server: `"GET /path HTTP/1.1"`). */
async function requestsLogged(n: Names): Promise<string[]> {
  const logs = await docker.getContainer(n.container).logs({ stdout: true, stderr: true });
  return logs.toString("utf8").match(/"[A-Z]+ [^"]*"/g) ?? [];
}

/**
 * Runs the doc's recipe block on a free candidate of `candidates` under fresh names; resolves what
 * it printed and the subnet taken. A subnet another run took since the pick is given up for the next.
 */
async function runRecipe(snippet: string, candidates: string[], cwd: string) {
  const n = names();
  made.push(n);
  return withFreeSubnet(docker, n.network, candidates, async (subnet) => {
    const script = localized(snippet, subnet, n);
    expect(script).not.toContain(DOC_SUBNET);
    const run: DocShellResult = await runDocShell(script, { cwd, tenant, timeoutMs: 200_000 });
    if (run.exitCode !== 0 && /overlap/i.test(run.stderr) && (await leftOver(n)).length === 0)
      throw new SubnetTakenError(run.stderr.trim());
    const info = await docker.getNetwork(n.network).inspect();
    expect(info.IPAM?.Config?.[0]?.Subnet).toBe(subnet);
    return { run, subnet, names: n };
  });
}

/** The lines the doc shows as output (`# …`), without the `# ` and a trailing ` …`. */
const shownLines = (snippet: string) =>
  [...snippet.matchAll(/^# (.*)$/gm)].map((m) => (m[1] ?? "").replace(/ …$/, ""));

const snippet = docSnippet("docs/network.md", "network-test-host");
const cleanup = docSnippet("docs/network.md", "network-test-host-cleanup");

describeEngine("docs/network.md: a test host of your own (engine)", () => {
  const checkout = checkoutLikeDir();
  afterAll(async () => {
    checkout.dispose();
    for (const n of made) await removeByName(n);
    for (const n of made) expect(await leftOver(n)).toEqual([]);
    expect(await containersWith("io.warden.tenant", tenant)).toBe(0);
  });

  it("the blocks hold the words the test replaces, and show the lines it checks", () => {
    expect(snippet).toContain(`docker network create --subnet ${DOC_SUBNET} ${DOC_NETWORK}\n`);
    expect(snippet).toContain(`--name ${DOC_CONTAINER} --network ${DOC_NETWORK} `);
    expect(cleanup).toBe(`docker rm -f ${DOC_CONTAINER}\ndocker network rm ${DOC_NETWORK}\n`);
    expect(shownLines(snippet)).toEqual([
      'warden: net allow GET web.test:8000 rule="allow web.test:8000"',
      "hello from web.test",
      'warden: net deny GET other.test:8000 rule="not-listed"',
      "urllib.error.HTTPError: HTTP Error 403: Forbidden",
    ]);
  });

  it("network-test-host: web.test's file comes back through the gateway, other.test is refused and never reaches it; the clean-up leaves nothing", async () => {
    const shown = shownLines(snippet);
    const { run, subnet, names: n } = await runRecipe(snippet, PUBLIC_CANDIDATES, checkout.dir);
    try {
      // The refused fetch is the last command: warden exec exits 1 for it, after the allowed one succeeded.
      expect(run.exitCode, run.stderr).toBe(1);
      const out = run.stdout.split("\n");
      const err = run.stderr.split("\n");
      expect(out.filter((l) => l === "hello from web.test")).toHaveLength(1);
      expect(err.filter((l) => l.startsWith(`${shown[0]} `))).toHaveLength(1);
      expect(err.filter((l) => l.startsWith(`${shown[2]} `))).toHaveLength(1);
      expect([...out, ...err]).toContain(shown[3]);
      expect(err.filter((l) => l.startsWith("warden: net "))).toHaveLength(2);
      // The server saw exactly one request: the allowed one.
      expect(await requestsLogged(n)).toEqual(['"GET /hello.txt HTTP/1.1"']);
      // What the doc says of the image: no curl.
      expect(await execExitCode(n, "curl http://web.test:8000/hello.txt")).toBe(127);
      const done = await runDocShell(localized(cleanup, subnet, n), { cwd: checkout.dir, tenant });
      expect(done.exitCode, done.stderr).toBe(0);
      expect(await leftOver(n)).toEqual([]);
    } finally {
      await removeByName(n);
    }
  }, 300_000);

  it("the same recipe on a private subnet (172.29.x, RFC 1918): web.test is refused by address and never reached", async () => {
    const { run, names: n } = await runRecipe(snippet, PRIVATE_CANDIDATES, checkout.dir);
    try {
      // bash -e stops at the first fetch, which fails.
      expect(run.exitCode, run.stderr).toBe(1);
      expect(run.stdout.split("\n")).not.toContain("hello from web.test");
      const net = run.stderr.split("\n").filter((l) => l.startsWith("warden: net "));
      expect(net).toHaveLength(1);
      expect(net[0]).toMatch(
        /^warden: net deny GET web\.test:8000 rule="refused-address \(allow web\.test:8000\)" /,
      );
      expect(await requestsLogged(n)).toEqual([]);
    } finally {
      await removeByName(n);
    }
  }, 300_000);
});

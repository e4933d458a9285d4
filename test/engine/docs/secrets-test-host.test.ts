/**
 * docs/secrets.md "Try it offline", run as written (test/helpers/doc-shell.ts: bash, `warden` =
 * this checkout's bin/warden.js) with the subnet, network and container names replaced by free,
 * unique ones (test/helpers/test-network.ts). The sandbox prints the placeholder, the bound host
 * receives the value once, the unbound one nothing, each with the line the doc shows; the clean-up
 * leaves nothing. Needs `npm run build` and the images of `npm run setup`.
 */
import { randomBytes } from "node:crypto";
import { afterAll, expect, it } from "vitest";
import { getDocker } from "../../../src/sandbox/index.js";
import { containersWith } from "../../helpers/agent-fixture.js";
import { checkoutLikeDir, runDocShell } from "../../helpers/doc-shell.js";
import { docSnippet } from "../../helpers/doc-snippets.js";
import { describeEngine } from "../../helpers/engine.js";
import { SubnetTakenError, withFreeSubnet } from "../../helpers/test-network.js";

const DOC_SUBNET = "198.51.100.0/24";
const DOC_NETWORK = "warden-try";
const slash27s = (net: string) => Array.from({ length: 8 }, (_, i) => `${net}.${i * 32}/27`);
const CANDIDATES = ["192.0.2", "198.51.100"].flatMap(slash27s);
const VALUE = "tok-example-0123456789";

const tenant = `test-docs-secrets-${process.pid}`;
const docker = getDocker();
const snippet = docSnippet("docs/secrets.md", "secrets-test-host");
const readmeSnippet = docSnippet("README.md", "secret-placeholder");
const cleanup = docSnippet("docs/secrets.md", "secrets-test-host-cleanup");
const network = `warden-test-sec-${randomBytes(4).toString("hex")}`;
const container = `${network}-api`;

/** The lines the doc shows as output (`# …`), without a trailing ` …`. */
const shownLines = (text: string) =>
  [...text.matchAll(/^# (.*)$/gm)].map((m) => (m[1] ?? "").replace(/ …$/, ""));

const reEscape = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

async function removeAll(): Promise<void> {
  await docker
    .getContainer(container)
    .remove({ force: true })
    .catch(() => {});
  await docker
    .getNetwork(network)
    .remove()
    .catch(() => {});
}

describeEngine("docs/secrets.md: try it offline (engine)", () => {
  const checkout = checkoutLikeDir();
  afterAll(async () => {
    checkout.dispose();
    await removeAll();
    expect(await containersWith("io.warden.tenant", tenant)).toBe(0);
  });

  it("secrets-test-host: the placeholder in the sandbox, the value at the bound host only, the lines the doc shows", async () => {
    const shown = shownLines(snippet);
    expect(shown).toEqual([
      "{{API_TOKEN}}",
      "warden: secret use API_TOKEN GET api.test:8000/",
      'warden: net allow GET api.test:8000 rule="allow api.test:8000"',
      "done",
      "warden: secret refuse API_TOKEN GET other.test:8000/ reason=unbound",
      'warden: net deny GET other.test:8000 rule="secret unbound API_TOKEN (allow other.test:8000)"',
      "urllib.error.HTTPError: HTTP Error 403: Forbidden",
      "ready",
      `api.test:8000 Bearer ${VALUE}`,
    ]);
    expect(cleanup).toBe(
      `docker rm -f ${DOC_NETWORK}-api\ndocker network rm ${DOC_NETWORK}\nrm try-secrets.yaml\n`,
    );
    try {
      const run = await withFreeSubnet(docker, network, CANDIDATES, async (subnet) => {
        const script = snippet.replaceAll(DOC_SUBNET, subnet).replaceAll(DOC_NETWORK, network);
        const r = await runDocShell(script, { cwd: checkout.dir, tenant, timeoutMs: 200_000 });
        if (r.exitCode !== 0 && /overlap/i.test(r.stderr)) throw new SubnetTakenError(r.stderr.trim());
        return r;
      });
      expect(run.exitCode, run.stderr).toBe(0);
      const out = run.stdout.split("\n");
      const err = run.stderr.split("\n");
      // stdout: two ids (network create, docker run -d), then the sandbox's lines, then docker logs.
      expect(out.slice(2).filter(Boolean)).toEqual([shown[0], shown[3], shown[7], shown[8]]);
      expect(err.filter((l) => l.startsWith("warden: "))).toEqual([
        shown[1],
        expect.stringMatching(new RegExp(`^${reEscape(shown[2] ?? "")} out=\\d+B in=\\d+B \\d+ms$`)),
        shown[4],
        expect.stringMatching(new RegExp(`^${reEscape(shown[5] ?? "")} out=\\d+B in=\\d+B \\d+ms$`)),
      ]);
      expect(err).toContain(shown[6]);
      // The value is nowhere in what warden printed: only the host's own log holds it.
      expect(err.join("\n")).not.toContain(VALUE);
      expect(out.filter((l) => l.includes(VALUE))).toEqual([shown[8]]);
      const done = await runDocShell(cleanup.replaceAll(DOC_NETWORK, network), { cwd: checkout.dir, tenant });
      expect(done.exitCode, done.stderr).toBe(0);
      expect(await docker.listNetworks({ filters: { name: [network] } })).toEqual([]);
    } finally {
      await removeAll();
    }
  }, 300_000);

  it("README's secret-placeholder: the sandbox's variable holds the placeholder, never the value", async () => {
    const shown = shownLines(readmeSnippet);
    expect(shown).toEqual(["{{GITHUB_TOKEN}}"]);
    const run = await runDocShell(readmeSnippet, { cwd: checkout.dir, tenant, timeoutMs: 200_000 });
    expect(run.exitCode, run.stderr).toBe(0);
    expect(run.stdout.trim()).toBe(shown[0]);
    expect(`${run.stdout}${run.stderr}`).not.toContain("ghp_yours");
  }, 300_000);
});

/**
 * docs/kubernetes.md's walkthrough, run as written against the test cluster, in its order: the image
 * imported into the node, the shipped deploy/kubernetes/rbac.yaml applied as the cluster
 * administrator, a kubeconfig made for its ServiceAccount, `warden serve` with that kubeconfig
 * running a session, then `warden gc` and the manifest deleted. It proves the manifest's Role is
 * enough for warden serve (reconcile, the NetworkPolicy, the replica Lease, a session's Pod and
 * channel, its deletion, gc) and that the ServiceAccount gets nothing beyond it: `auth can-i --list`
 * shows exactly the Role's rules besides what every user has, and requests outside them (a
 * Secret, another namespace, listing Leases or NetworkPolicies, pods/attach, updating a Pod) are
 * refused. Only the server's port (a free one, not 8080) and, with $WARDEN_TEST_IMAGE, the image
 * name change. The namespace is the manifest's `warden`; the file's last step deletes it. The
 * snippets run in a temporary directory with links to the checkout's deploy/ and scripts/.
 */
import { existsSync, readFileSync } from "node:fs";
import { mkdtemp, rm, symlink, writeFile } from "node:fs/promises";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { parseAllDocuments } from "yaml";
import { TEST_IMAGE } from "../helpers/backend.js";
import { runDocShell } from "../helpers/doc-shell.js";
import { docSnippet, REPO_ROOT } from "../helpers/doc-snippets.js";
import { describeK8s, OWN_KUBECONFIG, TEST_KUBECONFIG } from "../helpers/k8s.js";

/** The walkthrough's blocks, by name (literal names: test/unit/docs/snippets.test.ts finds them). */
const SNIPPETS: Record<string, string> = {
  "k8s-image-load": docSnippet("docs/kubernetes.md", "k8s-image-load"),
  "k8s-rbac-apply": docSnippet("docs/kubernetes.md", "k8s-rbac-apply"),
  "k8s-kubeconfig": docSnippet("docs/kubernetes.md", "k8s-kubeconfig"),
  "k8s-serve-config": docSnippet("docs/kubernetes.md", "k8s-serve-config"),
  "k8s-serve": docSnippet("docs/kubernetes.md", "k8s-serve"),
  "k8s-cleanup": docSnippet("docs/kubernetes.md", "k8s-cleanup"),
};
const MANIFEST = join(REPO_ROOT, "deploy/kubernetes/rbac.yaml");
const TENANT = "test-docs-k8s-unused";
/** The test node's own kubectl (the cluster's version) first on PATH, when this is that node. */
const KUBECTL_DIR = "/var/lib/warden-k8s/bin";

/** `text` with each `from` replaced by its `to`; each must occur, so a changed snippet fails here. */
function pointed(text: string, pairs: Array<[string, string]>): string {
  let out = text;
  for (const [from, to] of pairs) {
    expect(out, `the snippet names ${from}`).toContain(from);
    out = out.replaceAll(from, to);
  }
  return out;
}

/** A TCP port nothing listens on right now. */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

describeK8s("docs/kubernetes.md: the walkthrough, with the shipped RBAC manifest", () => {
  let dir: string;
  const env = (kubeconfig = TEST_KUBECONFIG) => ({
    KUBECONFIG: kubeconfig,
    PATH: `${existsSync(KUBECTL_DIR) && TEST_KUBECONFIG === OWN_KUBECONFIG ? `${KUBECTL_DIR}:` : ""}${process.env.PATH ?? ""}`,
  });
  /** Runs `script` with bash in `cwd` as the walkthrough's reader (the administrator's kubeconfig). */
  const sh = (script: string, cwd = dir, kubeconfig?: string) =>
    runDocShell(script, { cwd, tenant: TENANT, env: env(kubeconfig) });
  /** Runs a shell snippet of the walkthrough; it must succeed. */
  const step = async (name: string, pairs: Array<[string, string]> = []) => {
    const result = await sh(pointed(SNIPPETS[name] ?? "", pairs));
    expect(result.exitCode, `${name}:\n${result.stdout}\n${result.stderr}`).toBe(0);
    return result;
  };

  beforeAll(async () => {
    // Laid out like a checkout for the snippets' relative paths.
    dir = await mkdtemp(join(tmpdir(), "warden-docs-k8s-"));
    for (const part of ["deploy", "scripts"]) await symlink(join(REPO_ROOT, part), join(dir, part));
  });

  afterAll(async () => {
    // A failed run leaves no namespace behind either (the last step's delete, if it did not run).
    await sh(`kubectl delete -f ${MANIFEST} --ignore-not-found --wait=true`, REPO_ROOT);
    await rm(dir, { recursive: true, force: true });
  });

  it("k8s-image-load: imports the sandbox image into the node", async () => {
    const r = await step("k8s-image-load");
    expect(r.stdout + r.stderr).toContain("warden-sandbox:latest");
  });

  it("k8s-rbac-apply: the manifest makes the namespace (Pod Security restricted), the ServiceAccount, the Role and its binding", async () => {
    const r = await step("k8s-rbac-apply");
    expect(r.stdout.split("\n").filter(Boolean)).toEqual([
      expect.stringMatching(/^namespace\/warden (created|configured|unchanged)$/),
      expect.stringMatching(/^serviceaccount\/warden (created|configured|unchanged)$/),
      expect.stringMatching(/^role\.rbac\.authorization\.k8s\.io\/warden (created|configured|unchanged)$/),
      expect.stringMatching(
        /^rolebinding\.rbac\.authorization\.k8s\.io\/warden (created|configured|unchanged)$/,
      ),
    ]);
    const ns = await sh("kubectl get namespace warden -o jsonpath='{.metadata.labels}'");
    expect(JSON.parse(ns.stdout)).toMatchObject({ "pod-security.kubernetes.io/enforce": "restricted" });
  });

  it("k8s-kubeconfig: the ServiceAccount may do what the Role says and nothing more", async () => {
    const r = await step("k8s-kubeconfig");
    // auth can-i --list: the resource rows; the Role's four and the self reviews every user has.
    const rows = r.stdout
      .split("\n")
      .filter((line) => /^\S+\s+\[\]\s+\[\]\s+\[/.test(line))
      .map((line) => line.replace(/\s+\[\]\s+\[\]\s+/, " ").trim())
      .sort();
    const ruleRows = roleRules().map((rule) => `${rule.resource} [${rule.verbs.join(" ")}]`);
    expect(rows).toEqual(
      [
        ...ruleRows,
        "selfsubjectaccessreviews.authorization.k8s.io [create]",
        "selfsubjectreviews.authentication.k8s.io [create]",
        "selfsubjectrulesreviews.authorization.k8s.io [create]",
      ].sort(),
    );
    const asWarden = join(dir, "warden.kubeconfig");
    for (const [what, command] of [
      ["a Secret", "kubectl get secrets"],
      ["another namespace", "kubectl -n default get pods"],
      ["listing Leases", "kubectl get leases"],
      ["listing NetworkPolicies", "kubectl get networkpolicies"],
    ]) {
      const refused = await sh(command ?? "", dir, asWarden);
      expect(refused.exitCode, `${what}: ${refused.stdout}`).toBe(1);
      expect(refused.stderr).toMatch(
        /^Error from server \(Forbidden\): .* is forbidden: User "system:serviceaccount:warden:warden" cannot (get|list) resource/,
      );
    }
    for (const check of [
      "create pods --subresource=attach",
      "update pods",
      "deletecollection pods",
      "create pods -n default",
    ]) {
      const can = await sh(`kubectl auth can-i ${check}`, dir, asWarden);
      expect([check, can.stdout]).toEqual([check, "no"]);
    }
  });

  it("k8s-serve: warden serve with that kubeconfig runs a session in a Pod of namespace warden, deletes it, stops", async () => {
    const port = String(await freePort());
    const image = TEST_IMAGE ?? "warden-sandbox:latest";
    const config = pointed(SNIPPETS["k8s-serve-config"] ?? "", [
      ["port: 8080", `port: ${port}`],
      ["defaultImage: warden-sandbox:latest", `defaultImage: ${image}`],
    ]);
    await writeFile(join(dir, "warden-k8s.yaml"), config);
    const r = await step("k8s-serve", [["localhost:8080", `localhost:${port}`]]);
    const lines = r.stdout.trimEnd().split("\n");
    const result = JSON.parse(lines[0] ?? "") as {
      results: { isError: boolean; content: { text: string }[] }[];
    };
    expect(result.results[0]?.isError).toBe(false);
    expect(result.results[0]?.content[0]?.text).toMatch(/^hello from [1-9]\d*\n$/);
    expect(lines[1]).toMatch(/^NAME\s+READY\s+STATUS\s+RESTARTS\s+AGE$/);
    // The session's Pod (warden-<session id>-<hex>), and the warm pool's spare when it is up yet.
    expect(lines.at(-1)).toBe("204");
    const pods = lines.slice(2, -1).map((line) => line.split(/\s+/).slice(0, 3).join(" "));
    expect(pods.filter((p) => !p.startsWith("warden-pool-"))).toEqual([
      expect.stringMatching(/^warden-[0-9a-f]{8}-[0-9a-f-]+ 1\/1 Running$/),
    ]);
    expect(pods.length).toBeLessThanOrEqual(2);
    expect(r.stderr).toContain("warden serve: stopped");
  }, 240_000);

  it("k8s-cleanup: gc, then the manifest deleted with its namespace", async () => {
    await step("k8s-cleanup");
    const gone = await sh("kubectl get namespace warden");
    expect(gone.exitCode).toBe(1);
    expect(gone.stderr).toContain('namespaces "warden" not found');
  });
});

/** The Role's rules in deploy/kubernetes/rbac.yaml as `auth can-i --list` names them, sorted. */
function roleRules(): { resource: string; verbs: string[] }[] {
  const role = parseAllDocuments(readFileSync(MANIFEST, "utf8"))
    .map(
      (d) =>
        d.toJSON() as {
          kind: string;
          rules?: { apiGroups: string[]; resources: string[]; verbs: string[] }[];
        },
    )
    .find((d) => d.kind === "Role");
  return (role?.rules ?? [])
    .flatMap((rule) =>
      rule.resources.map((resource) => ({
        resource: rule.apiGroups[0] ? `${resource}.${rule.apiGroups[0]}` : resource,
        verbs: rule.verbs,
      })),
    )
    .sort((a, b) => a.resource.localeCompare(b.resource));
}

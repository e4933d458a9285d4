/**
 * A kubeconfig whose user is a fresh ServiceAccount of the test namespace with only the rights a
 * test gives it (a Role and its RoleBinding, in the test namespace and in each namespace of
 * `alsoIn`), for proving which RBAC rules the backend needs and what it says when one is missing.
 * `remove` deletes the account, the Roles, the bindings and the file.
 */
import { randomBytes } from "node:crypto";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { KubeConfig, RbacAuthorizationV1Api, type V1PolicyRule } from "@kubernetes/client-node";
import { TEST_KUBECONFIG, TEST_NAMESPACE, testCluster } from "./k8s.js";

/** A limited kubeconfig file and how to remove it and its account. */
export interface LimitedKubeconfig {
  kubeconfig: string;
  /** The temp directory holding the file (free for a test's other files). */
  dir: string;
  remove(): Promise<void>;
}

/** Creates the ServiceAccount `<prefix>-<random>` with `rules` in the test namespace and in `alsoIn`. */
export async function limitedKubeconfig(
  prefix: string,
  rules: V1PolicyRule[],
  alsoIn: string[] = [],
): Promise<LimitedKubeconfig> {
  const admin = new KubeConfig();
  admin.loadFromFile(TEST_KUBECONFIG);
  const rbac = admin.makeApiClient(RbacAuthorizationV1Api);
  const { core } = testCluster();
  const name = `${prefix}-${randomBytes(3).toString("hex")}`;
  const namespace = TEST_NAMESPACE;
  const dir = await mkdtemp(join(tmpdir(), "warden-k8s-rbac-"));
  const remove = async () => {
    for (const ns of [namespace, ...alsoIn]) {
      await rbac.deleteNamespacedRoleBinding({ name, namespace: ns }).catch(() => undefined);
      await rbac.deleteNamespacedRole({ name, namespace: ns }).catch(() => undefined);
    }
    await core.deleteNamespacedServiceAccount({ name, namespace }).catch(() => undefined);
    await rm(dir, { recursive: true, force: true });
  };
  try {
    await core.createNamespacedServiceAccount({ namespace, body: { metadata: { name } } });
    for (const ns of [namespace, ...alsoIn]) {
      await rbac.createNamespacedRole({ namespace: ns, body: { metadata: { name }, rules } });
      await rbac.createNamespacedRoleBinding({
        namespace: ns,
        body: {
          metadata: { name },
          roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name },
          subjects: [{ kind: "ServiceAccount", name, namespace }],
        },
      });
    }
    const token = await core.createNamespacedServiceAccountToken({
      name,
      namespace,
      body: { spec: { audiences: [], expirationSeconds: 600 } },
    });
    const server = admin.getCurrentCluster()!;
    const config = new KubeConfig();
    config.loadFromOptions({
      clusters: [server],
      users: [{ name, token: token.status!.token }],
      contexts: [{ name, cluster: server.name, user: name }],
      currentContext: name,
    });
    const kubeconfig = join(dir, "kubeconfig");
    await writeFile(kubeconfig, config.exportConfig(), { mode: 0o600 });
    return { kubeconfig, dir, remove };
  } catch (err) {
    await remove();
    throw err;
  }
}

/**
 * A RuntimeClass whose scheduling.nodeSelector no node matches (the RuntimeClass admission plugin
 * copies it into the Pod), so the scheduler keeps a Pod on it Pending with "didn't match Pod's node
 * affinity/selector", as it keeps one Pending with "Insufficient cpu" on a full node, without
 * filling the node the other suites share. RuntimeClasses are cluster-wide: the name is the test
 * namespace's own.
 */
import { KubeConfig, NodeV1Api } from "@kubernetes/client-node";
import { TEST_KUBECONFIG, TEST_NAMESPACE } from "./k8s.js";

/** The scheduler's message for a Pod on a no-node RuntimeClass on the single-node test cluster. */
export const NO_NODE_SCHEDULER_MESSAGE =
  "0/1 nodes are available: 1 node(s) didn't match Pod's node affinity/selector.";

/** A no-node RuntimeClass (`name`, runc) and its removal. */
export interface NoNodeRuntimeClass {
  name: string;
  remove(): Promise<void>;
}

/** Creates (replacing a leftover) the RuntimeClass `<namespace>-<suffix>` that no node takes. */
export async function createNoNodeRuntimeClass(suffix = "on-no-node"): Promise<NoNodeRuntimeClass> {
  const name = `${TEST_NAMESPACE}-${suffix}`.slice(0, 63);
  const config = new KubeConfig();
  config.loadFromFile(TEST_KUBECONFIG);
  const api = config.makeApiClient(NodeV1Api);
  const remove = async () => {
    await api.deleteRuntimeClass({ name }).catch(() => undefined);
  };
  await remove();
  await api.createRuntimeClass({
    body: {
      metadata: { name },
      handler: "runc",
      scheduling: { nodeSelector: { "io.warden.test/no-such-node": "true" } },
    },
  });
  return { name, remove };
}

/** Every benchmark section, in run order (one line per section). */
import type { BenchSection } from "../harness.js";
import { egressSection } from "./egress.js";
import { errorFloodSection } from "./error-flood.js";
import { fastPathSection } from "./fast-path.js";
import { k8sSection } from "./k8s.js";
import { noisyNeighbourSection } from "./noisy-neighbour.js";
import { policySection } from "./policy.js";
import { processesSection } from "./processes.js";
import { sandboxSection } from "./sandbox.js";
import { serverLoadSection } from "./server-load.js";

export const sections: BenchSection[] = [
  sandboxSection,
  policySection,
  processesSection,
  serverLoadSection,
  fastPathSection,
  noisyNeighbourSection,
  errorFloodSection,
  egressSection,
  k8sSection,
];

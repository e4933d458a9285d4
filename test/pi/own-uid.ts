/** The `own-uid` listed difference (known-differences.ts, docs/pi-fidelity.md). */
import type { KnownDifference } from "./difference-types.js";

export const OWN_UID: KnownDifference = {
  id: "own-uid",
  kind: "safety",
  summary:
    "Each sandbox runs as a uid of its own, drawn per sandbox and named nowhere in the image, so `ls -l` shows its number as owner and group; Pi's container runs as the image's user `sandbox` (1000).",
  rewrite: (d) =>
    d.tool === "bash" ? { pi: d.pi, warden: d.warden.replace(/\b(\d{7,10}) \1\b/g, "sandbox sandbox") } : d,
};

import { describe, expect, it } from "vitest";
import type { ReconcileReport } from "../../../../src/server/sessions/reconcile.js";
import { reconcileLine } from "../../../../src/server/sessions/reconcile-line.js";

const report: ReconcileReport = {
  adopted: ["a", "b"],
  dropped: [],
  orphansRemoved: ["o"],
  egressRemoved: [],
  volumesRemoved: ["v"],
  socketDirsRemoved: ["/run/warden-channels/0123456789abcdef"],
  skipped: [],
  uploadsRemoved: ["u"],
  interrupted: ["a/c1"],
};

describe("warden serve's reconcile line", () => {
  it("on Docker counts the workspace volumes and channel socket directories removed", () => {
    expect(reconcileLine(report, 2)).toBe(
      "warden serve: adopted 2, dropped 0, removed 1 orphan(s), 1 volume(s), 1 socket dir(s), 2 spill dir(s), 1 upload(s); 1 interrupted call(s)",
    );
  });

  it("on Kubernetes names the namespaces reconciled instead of volumes (a Pod has none)", () => {
    expect(
      reconcileLine({ ...report, volumesRemoved: [], socketDirsRemoved: [] }, 2, ["warden", "warden-globex"]),
    ).toBe(
      "warden serve: adopted 2, dropped 0, removed 1 orphan(s) in namespace(s) warden, warden-globex, 2 spill dir(s), 1 upload(s); 1 interrupted call(s)",
    );
  });
});

import { hostname } from "node:os";
import { describe, expect, it } from "vitest";
import { controllerProcessAlive, LABEL, sandboxLabels, staleReason } from "../../../src/sandbox/labels.js";
import { serverControllerId } from "../../../src/server/config/index.js";

const now = new Date("2026-11-30T10:00:00Z");
const later = new Date("2026-12-01T10:00:00Z");
// A pid no process has: above the kernel's pid_max limit (2^22).
const deadPid = 4_194_304 + 17;

function labelsOf(controller: string, expiresAt = later): Record<string, string> {
  return sandboxLabels({ sessionId: "s1", tenant: "t1", createdAt: now, expiresAt, controller });
}

describe("sandbox labels: who owns a sandbox, and when gc may remove it", () => {
  it("labels the controller as hostname:pid of this process by default", () => {
    const labels = sandboxLabels({ sessionId: "s1", tenant: "t1", createdAt: now, expiresAt: later });
    expect(labels[LABEL.controller]).toBe(`${hostname()}:${process.pid}`);
    expect(staleReason(labels, now)).toBeNull();
  });

  it("judges a sandbox whose controller process on this host is dead as orphaned", () => {
    expect(controllerProcessAlive(`${hostname()}:${deadPid}`)).toBe(false);
    expect(staleReason(labelsOf(`${hostname()}:${deadPid}`), now)).toBe("orphaned");
  });

  it("never judges another host's controller or a stable owner id (warden serve) as orphaned", () => {
    expect(controllerProcessAlive("elsewhere:1")).toBeNull();
    const serve = serverControllerId("/var/lib/warden");
    expect(serve).toMatch(new RegExp(`^serve@${hostname()}-[0-9a-f]{12}$`));
    expect(controllerProcessAlive(serve)).toBeNull();
    expect(staleReason(labelsOf(serve), now)).toBeNull();
  });

  it("removes any sandbox past its expiry, whoever owns it", () => {
    expect(staleReason(labelsOf(serverControllerId("/srv"), now), now)).toBe("expired");
  });
});

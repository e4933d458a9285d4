import { describe, expect, it } from "vitest";
import { OCSF_VERSION, toOcsf } from "../../../src/audit/index.js";

const base = { level: 30, time: "2026-12-07T12:00:00.000Z", tenant: "alpha", session: "s1", chain: [] };
const classOf = (record: Record<string, unknown>) => {
  const e = toOcsf({ ...base, ...record }, "h");
  return [e.class_uid, e.category_uid, e.activity_id, e.type_uid];
};

describe("toOcsf", () => {
  it("maps each kind to its OCSF class and activity", () => {
    const tunnel = { kind: "network", domain: "a.test", port: 443, method: "CONNECT", rule: "a.test:443" };
    expect(classOf({ ...tunnel, decision: "allow" })).toEqual([4001, 4, 6, 400106]);
    expect(classOf({ ...tunnel, decision: "deny" })).toEqual([4001, 4, 5, 400105]);
    expect(classOf({ ...tunnel, method: "GET", insideTunnel: true, decision: "allow" })).toEqual([
      4002, 4, 3, 400203,
    ]);
    expect(classOf({ kind: "network", method: "PATCH", decision: "allow" })).toEqual([4002, 4, 99, 400299]);
    expect(classOf({ kind: "network-dropped", count: 3 })).toEqual([4001, 4, 99, 400199]);
    const secret = {
      kind: "secret",
      secrets: ["GH"],
      host: "api.github.com",
      port: 443,
      method: "POST",
      path: "/x",
    };
    expect(classOf({ ...secret, decision: "use" })).toEqual([4002, 4, 6, 400206]);
    expect(classOf({ ...secret, decision: "refuse", reason: "unbound" })).toEqual([2004, 2, 1, 200401]);
    expect(classOf({ kind: "tool", tool: "bash", toolCallId: "c1", decision: "allow" })).toEqual([
      6003, 6, 99, 600399,
    ]);
    expect(classOf({ kind: "approval", toolCallId: "c1", answer: "deny" })).toEqual([6003, 6, 99, 600399]);
    expect(classOf({ kind: "session", event: "created" })).toEqual([6003, 6, 1, 600301]);
    expect(classOf({ kind: "session", event: "closed" })).toEqual([6003, 6, 4, 600304]);
    expect(classOf({ kind: "checkpoint", stream: "tenant:alpha" })).toEqual([0, 0, 0, 0]);
  });

  it("fills time, severity, status, metadata, actor and endpoint; keeps the rest under unmapped", () => {
    const record = {
      ...base,
      kind: "secret",
      secrets: ["GH"],
      decision: "refuse",
      reason: "unbound",
      host: "evil.test",
      port: 443,
      method: "POST",
      path: "/upload",
      toolCallId: "c1",
    };
    expect(toOcsf(record, "abc")).toEqual({
      class_uid: 2004,
      category_uid: 2,
      activity_id: 1,
      activity_name: "Create",
      type_uid: 200401,
      time: Date.parse(base.time),
      severity_id: 3,
      status_id: 2,
      metadata: { version: OCSF_VERSION, uid: "abc", product: { name: "warden", vendor_name: "warden" } },
      actor: { user: { uid: "alpha", type: "tenant" } },
      dst_endpoint: { hostname: "evil.test", port: 443 },
      http_request: { http_method: "POST", url: { path: "/upload" } },
      finding_info: { uid: "abc", title: "secret placeholder refused: unbound GH" },
      unmapped: {
        kind: "secret",
        tenant: "alpha",
        session: "s1",
        secrets: ["GH"],
        decision: "refuse",
        reason: "unbound",
        host: "evil.test",
        port: 443,
        method: "POST",
        path: "/upload",
        toolCallId: "c1",
        chain: [],
      },
    });
  });

  it("gives every class the attributes ocsf-schema marks required for it", () => {
    const records: Record<string, unknown>[] = [
      { kind: "network", domain: "a.test", port: 443, method: "CONNECT", decision: "allow" },
      { kind: "network", domain: "a.test", port: 443, method: "GET", insideTunnel: true, decision: "allow" },
      {
        kind: "secret",
        secrets: ["GH"],
        host: "a.test",
        port: 443,
        method: "GET",
        path: "/",
        decision: "refuse",
        reason: "unbound",
      },
      { kind: "tool", tool: "bash", toolCallId: "c1", decision: "allow" },
      { kind: "approval", toolCallId: "c1", answer: "allow-once" },
      { kind: "session", event: "created" },
      { kind: "interrupted", tool: "bash", toolCallId: "c2" },
      { kind: "request", method: "GET", route: "/v1/sessions", status: 401, tenant: undefined },
      { kind: "checkpoint", stream: "server" },
    ];
    const base_event = [
      "activity_id",
      "category_uid",
      "class_uid",
      "metadata",
      "severity_id",
      "time",
      "type_uid",
    ];
    for (const record of records) {
      const e = toOcsf({ ...base, ...record }, "h");
      for (const field of base_event) expect(e[field], `${String(record.kind)}: ${field}`).toBeDefined();
      expect(e.metadata.product).toBeDefined();
      expect(e.metadata.version).toBe(OCSF_VERSION);
      if (e.class_uid === 6003) {
        expect(e.actor, `${String(record.kind)}: actor`).toBeDefined();
        expect((e.api as { operation?: string }).operation, `${String(record.kind)}: api.operation`).toEqual(
          expect.any(String),
        );
        expect((e.src_endpoint as { name?: string }).name).toEqual(expect.any(String));
      }
      if (e.class_uid === 2004) expect((e.finding_info as { uid?: string }).uid).toBe("h");
    }
    expect(toOcsf({ ...base, kind: "tool", tool: "bash" }, "h").api).toEqual({ operation: "tool bash" });
    const anonymous = toOcsf(
      { level: 30, time: base.time, kind: "request", method: "GET", route: "/v1/sessions", chain: [] },
      "h",
    );
    expect(anonymous).toMatchObject({
      actor: { app_name: "warden serve" },
      api: { operation: "GET /v1/sessions" },
      src_endpoint: { name: "unauthenticated client" },
    });
  });
});

/**
 * End to end: the controller image (images/controller/Dockerfile) started with testcontainers'
 * GenericContainer (Ryuk disabled, local images only, the engine socket bound in), driven over its
 * HTTP API by two tenants side by side with streaming; cross-tenant requests are 404s.
 * Compose itself needs v2 for testcontainers, which Debian does not ship; docker-compose.yml runs this
 * same image with the same mounts.
 */
import { execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { resolve } from "node:path";
import Docker from "dockerode";
import { afterAll, beforeAll, expect, it } from "vitest";
import { hashKey } from "../../../src/server/tenancy/auth.js";
import { describeEngine } from "../../helpers/engine.js";
import { removeTenant, testQuotas } from "../../helpers/server-fixture.js";

process.env.TESTCONTAINERS_RYUK_DISABLED = "true";
const { GenericContainer, PullPolicy, Wait } = await import("testcontainers");
type Started = Awaited<ReturnType<InstanceType<typeof GenericContainer>["start"]>>;

const IMAGE = "warden-controller:latest";
const suffix = randomBytes(4).toString("hex");
const TENANTS = [`test-e2e-a-${suffix}`, `test-e2e-b-${suffix}`] as const;
const KEYS = Object.fromEntries(TENANTS.map((t) => [t, `key-${t}`]));
const quotas = testQuotas(2);

describeEngine("controller image end to end (testcontainers)", () => {
  let controller: Started;
  let base: string;

  const api = (tenant: string, path: string, init: RequestInit = {}) =>
    fetch(`${base}${path}`, {
      ...init,
      headers: {
        authorization: `Bearer ${KEYS[tenant]}`,
        "content-type": "application/json",
        ...init.headers,
      },
    });

  beforeAll(async () => {
    // Built from this checkout when missing or built from other sources (its io.warden.source
    // label, images/controller/build.sh): a stale image would test old code.
    const build = resolve(import.meta.dirname, "../../../images/controller/build.sh");
    const wanted = execFileSync("bash", [build, "--source-hash"], { encoding: "utf8" }).trim();
    const built = await new Docker()
      .getImage(IMAGE)
      .inspect()
      .then(
        (info) => info.Config.Labels?.["io.warden.source"],
        () => undefined,
      );
    if (built !== wanted) execFileSync("bash", [build], { stdio: "inherit" });
    const config = {
      host: "0.0.0.0",
      port: 8080,
      stateDir: "/var/lib/warden",
      tenants: TENANTS.map((id) => ({ id, keys: [{ id: "k", sha256: hashKey(KEYS[id]!) }], quotas })),
    };
    controller = await new GenericContainer(IMAGE)
      .withPullPolicy(PullPolicy.defaultPolicy())
      .withBindMounts([{ source: "/var/run/docker.sock", target: "/var/run/docker.sock" }])
      .withCopyContentToContainer([
        { content: JSON.stringify(config), target: "/etc/warden/warden-serve.json" },
      ])
      .withEnvironment({ WARDEN_SERVE_CONFIG: "/etc/warden/warden-serve.json" })
      .withExposedPorts(8080)
      .withLabels({ "io.warden.test": suffix })
      .withWaitStrategy(Wait.forLogMessage(/listening on/))
      // Generous bounds, not budgets: on a loaded 2-core machine the build (npm ci, tsc, the
      // image's layers) took past 15 min, and the start more than 2 (issue 36).
      .withStartupTimeout(600_000)
      .start();
    base = `http://${controller.getHost()}:${controller.getMappedPort(8080)}`;
  }, 3_600_000);

  afterAll(async () => {
    await controller?.stop({ timeout: 15_000 });
    for (const t of TENANTS) await removeTenant(t);
  });

  it("serves two tenants side by side with streaming and 404s across tenants", async () => {
    expect(await (await fetch(`${base}/healthz`)).json()).toEqual({ status: "ok", sessions: 0 });
    const sessions = await Promise.all(
      TENANTS.map(async (t) => {
        const res = await api(t, "/v1/sessions", { method: "POST", body: "{}" });
        expect(res.status).toBe(201);
        return ((await res.json()) as { id: string }).id;
      }),
    );
    const streams = await Promise.all(
      TENANTS.map(async (t, i) => {
        const res = await api(t, `/v1/sessions/${sessions[i]}/tool-calls`, {
          method: "POST",
          headers: { accept: "text/event-stream" },
          body: JSON.stringify({
            toolCalls: [
              {
                id: "b",
                name: "bash",
                arguments: { command: `for i in 1 2 3; do echo ${t}-$i; sleep 0.2; done` },
              },
            ],
          }),
        });
        return { type: res.headers.get("content-type"), body: await res.text() };
      }),
    );
    streams.forEach((s, i) => {
      expect(s.type).toBe("text/event-stream; charset=utf-8");
      const events = [...s.body.matchAll(/^event: (.*)$/gm)].map((m) => m[1]);
      expect(events[0]).toBe("tool_execution_start");
      expect(events).toContain("tool_execution_update");
      expect(events.slice(-2)).toEqual(["tool_execution_end", "results"]);
      const results = JSON.parse(/^data: (.*)$/gm.exec(s.body.split("event: results\n")[1]!)![1]!) as {
        results: { content: { text: string }[] }[];
      };
      const t = TENANTS[i]!;
      expect(results.results[0]!.content[0]!.text).toBe(`${t}-1\n${t}-2\n${t}-3\n`);
    });
    const [a, b] = TENANTS;
    for (const [method, path] of [
      ["GET", `/v1/sessions/${sessions[0]}`],
      ["GET", `/v1/sessions/${sessions[0]}/changes`],
      ["GET", `/v1/sessions/${sessions[0]}/workspace`],
      ["GET", `/v1/tools?session=${sessions[0]}`],
      ["DELETE", `/v1/sessions/${sessions[0]}`],
    ] as const) {
      expect([path, (await api(b, path, { method })).status]).toEqual([path, 404]);
    }
    const metrics = await (await fetch(`${base}/metrics`)).text();
    expect(metrics).toContain(`warden_tool_calls_total{tenant="${a}",tool="bash",outcome="ok"} 1`);
    for (const [t, id] of [
      [a, sessions[0]],
      [b, sessions[1]],
    ] as const) {
      expect((await api(t, `/v1/sessions/${id}`, { method: "DELETE" })).status).toBe(204);
    }
  });
});

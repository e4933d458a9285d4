/**
 * `kill -9` of `warden serve` with sessions that have network egress, then a restart: an adopted
 * session keeps its gateway and network, its new bash calls get the proxy variables again, and its
 * connections are audit lines and counted again (the download the restart's adoption ended
 * included), and its `ask` connections wait in the new server's HTTP approvals; an adopted session whose gateway was gone has no
 * network at all (fail closed); the gateways and networks of sessions not adopted (a container
 * without its record, a gateway started just before the crash without its sandbox) are removed.
 */
import { randomBytes } from "node:crypto";
import { unlink } from "node:fs/promises";
import { join } from "node:path";
import { expect, it } from "vitest";
import { SESSION_LABEL, startEgressGateway } from "../../../src/egress/index.js";
import { getDocker, LABEL } from "../../../src/sandbox/index.js";
import { serverControllerId } from "../../../src/server/config/index.js";
import { describeEngine } from "../../helpers/engine.js";
import { spawnServe, tenantClient, writeServeConfig } from "../../helpers/server-fixture.js";
import { networkAuditLines } from "./client.js";
import { useEgressServe } from "./serve-fixture.js";
import { egressOf } from "./testbed.js";

const TENANT = `test-egress-restart-${randomBytes(4).toString("hex")}`;
const KEY = `key-${TENANT}`;

/** Python that fetches each URL and prints its body or `refused URL`. */
const FETCH = (...urls: string[]) =>
  `python3 -c "
import urllib.request as u
for url in ${JSON.stringify(urls).replace(/"/g, "'")}:
    try: print(u.urlopen(url, timeout=8).read().decode().strip())
    except Exception as e: print('refused', url)"`;

describeEngine("warden serve with network egress: kill -9 and restart", () => {
  const serve = useEgressServe(TENANT, "warden-egress-restart-");
  const { children } = serve;
  const { api, bash, bashText } = tenantClient(KEY);

  it("adopted sessions keep their egress, a gone gateway means no network, the rest is swept", async () => {
    const [bed, dir, main] = [serve.bed(), serve.dir(), serve.main()];
    const config = await writeServeConfig(dir, TENANT, KEY, {
      server: { warmPool: { size: 0 } },
      tenant: {
        network: {
          allow: ["allowed.test:443", "pypi.test:443"],
          ask: ["ask.test:443"],
          egressNetworks: [bed.publicNetwork],
          caBundle: bed.caBundlePath,
        },
      },
    });
    const state = join(dir, "state");
    const first = await spawnServe(main, config);
    children.push(first);
    const create = async (allow = ["allowed.test:443"]) => {
      const res = await api(first, "/v1/sessions", {
        method: "POST",
        body: JSON.stringify({ network: { allow } }),
      });
      expect(res.status).toBe(201);
      return ((await res.json()) as { id: string }).id;
    };
    // Within the tenant's bound, ask.test stays under its `ask` rule (strictest wins).
    const kept = await create(["allowed.test:443", "ask.test:443"]);
    const gatewayGone = await create();
    const unrecorded = await create();
    const fetchBoth = FETCH("https://allowed.test/hello", "https://pypi.test/hello");
    expect(await bashText(first, kept, fetchBoth)).toBe(
      "hello from public as allowed.test\nrefused https://pypi.test/hello\n",
    );
    // As if the crash came between starting a session's gateway and creating its sandbox.
    const docker = getDocker();
    const strayId = `stray-${randomBytes(4).toString("hex")}`;
    await startEgressGateway(docker, {
      sessionId: strayId,
      labels: {
        [LABEL.tenant]: TENANT,
        [LABEL.created]: new Date().toISOString(),
        [LABEL.controller]: serverControllerId(state),
      },
      keepLabels: [LABEL.tenant, LABEL.created, LABEL.controller],
      network: { mode: "allowlist", rules: [{ host: "allowed.test", ports: [443], decision: "allow" }] },
    });
    // A download still running when the controller dies: its tunnel ends when adoption kills it.
    const slow = `python3 -c "
import time, urllib.request as u
r = u.urlopen('https://allowed.test/bytes/104857600', timeout=60)
r.read(1024); open('/tmp/reading', 'w').write('reading\\n')
while r.read(1024): time.sleep(1)"`;
    const inFlight = bash(first, kept, slow).catch(() => "connection lost");
    // Until the download has its first KiB (its tunnel is open and bytes flow), asked by a call
    // beside it: a fixed wait is what a loaded host outlasts (the test's timeout bounds this one).
    await expect.poll(() => bashText(first, kept, "cat /tmp/reading 2>/dev/null; true")).toBe("reading\n");
    // And until its tunnel's audit line is in (the gateway reports it when the tunnel opens; the
    // controller writes it as it reads it, so a loaded host may not have it yet): the kill comes
    // after it, as the assertions below expect.
    const auditLines = () => networkAuditLines(join(state, "audit.jsonl"));
    await expect
      .poll(async () => (await auditLines()).filter((a) => !a.insideTunnel && a.session === kept).length)
      .toBe(3);
    // A connection made and ended while no controller runs: the gateway keeps its records until a
    // controller acknowledges them, and replays them to the adopting one.
    await bash(
      first,
      kept,
      // The call returns once the script runs in its own session: a child that has not reached
      // its setsid() yet is still in the call's process group, which the call's end kills.
      `cat > /tmp/later.sh <<'LATER'\ntouch /tmp/later-started\nsleep 1\n${FETCH("https://allowed.test/hello")} > /tmp/while-down 2>&1\nLATER\nsetsid -f sh /tmp/later.sh < /dev/null > /dev/null 2>&1\nuntil [ -e /tmp/later-started ]; do sleep 0.05; done`,
    );
    first.child.kill("SIGKILL");
    await first.exited;
    expect(await inFlight).toBe("connection lost");
    await new Promise((r) => setTimeout(r, 4000));
    // As if the crash came between creating a sandbox and writing its record.
    await unlink(join(state, "sessions", `${unrecorded}.json`));
    // A gateway that died while no controller ran.
    const [gone] = await docker.listContainers({
      filters: { label: [`${SESSION_LABEL}=${gatewayGone}`, "io.warden.egress=gateway"] },
    });
    await docker.getContainer(gone!.Id).remove({ force: true });

    const second = await spawnServe(main, config, ["--on-exit", "close"]);
    children.push(second);
    expect(second.stderr()).toContain("warden serve: adopted 2, dropped 0, removed 1 orphan(s)");
    expect(second.stderr()).toContain(
      "warden serve: removed the egress gateways of 2 session(s) not adopted",
    );
    expect(second.stderr()).toContain(`session ${gatewayGone}: its egress gateway is gone`);
    expect(await egressOf(unrecorded)).toEqual([]);
    expect(await egressOf(strayId)).toEqual([]);
    expect(await egressOf(kept)).toEqual(["gateway", "network"]);
    expect(await egressOf(gatewayGone)).toEqual(["network"]);

    expect(await bashText(second, kept, "cat /tmp/while-down")).toBe("hello from public as allowed.test\n");
    // The adopted session: the proxy variables, the allowlist, audit lines and counters, as before.
    expect(await bashText(second, kept, "echo $HTTPS_PROXY")).toMatch(/^http:\/\/[0-9.]+:3128\n$/);
    expect(await bashText(second, kept, fetchBoth)).toBe(
      "hello from public as allowed.test\nrefused https://pypi.test/hello\n",
    );
    // Its `ask` questions reach the new server's HTTP approvals (the gateway's stdin is re-attached).
    const asked = bashText(second, kept, FETCH("https://ask.test/hello"));
    type Pending = { id: string; sessionId: string; network?: unknown };
    let pending: Pending[] = [];
    while (pending.length === 0) {
      await new Promise((r) => setTimeout(r, 200));
      pending = ((await (await api(second, "/v1/approvals")).json()) as { approvals: Pending[] }).approvals;
    }
    expect(pending.map((p) => [p.sessionId, p.network])).toEqual([
      [kept, { host: "ask.test", port: 443, rule: "ask ask.test:443" }],
    ]);
    const answered = await api(second, `/v1/approvals/${pending[0]?.id}`, {
      method: "POST",
      body: JSON.stringify({ decision: "allow-once" }),
    });
    expect(answered.status).toBe(200);
    expect(await asked).toBe("hello from public as ask.test\n");
    // The gone gateway's session: no proxy, and no way out with or without one.
    expect(await bashText(second, gatewayGone, "echo proxy=$HTTPS_PROXY")).toBe("proxy=\n");
    const directly = `python3 -c "
import socket
try: socket.create_connection(('${bed.publicAddress}', 443), timeout=3); print('connected')
except Exception as e: print('no route')"`;
    expect(await bashText(second, gatewayGone, directly)).toBe("no route\n");
    expect(await bashText(second, gatewayGone, FETCH("https://allowed.test/hello"))).toBe(
      "refused https://allowed.test/hello\n",
    );
    const row = (a: Awaited<ReturnType<typeof auditLines>>[number]) => [
      a.session,
      a.domain,
      a.decision,
      a.rule,
    ];
    const twice = [
      [kept, "allowed.test", "allow", "allow allowed.test:443"],
      [kept, "pypi.test", "deny", "not-listed"],
    ];
    // Until the gateways' lines are in (they arrive after the calls' answers; the test's timeout
    // bounds the wait). The tunnels: audited before the restart (the download's when it was opened),
    // and the calls after it. The requests inside them: the download's is audited after the
    // restart, when the adoption ended it.
    await expect
      .poll(async () => {
        const audit = await auditLines();
        return {
          tunnels: audit.filter((a) => !a.insideTunnel).map(row),
          inside: audit.filter((a) => a.insideTunnel).map(row),
        };
      })
      .toEqual({
        tunnels: [
          ...twice,
          [kept, "allowed.test", "allow", "allow allowed.test:443"],
          [kept, "allowed.test", "allow", "allow allowed.test:443"],
          ...twice,
          [kept, "ask.test", "ask→allow", "ask ask.test:443"],
        ],
        inside: [
          [kept, "allowed.test", "allow", "allow allowed.test:443"],
          [kept, "allowed.test", "allow", "allow allowed.test:443"],
          [kept, "allowed.test", "allow", "allow allowed.test:443"],
          [kept, "allowed.test", "allow", "allow allowed.test:443"],
          [kept, "ask.test", "allow", "ask ask.test:443"],
        ],
      });
    const inside = (await auditLines()).filter((a) => a.insideTunnel);
    // The download's request: audited when the adoption ended it, with what passed before.
    expect(Math.max(...inside.map((a) => a.bytesIn))).toBeGreaterThan(1024);
    const metrics = await (await fetch(`${second.url}/metrics`)).text();
    // After the restart: the replayed tunnel and request of the connection made while no server ran,
    // the download's request, a tunnel and its request, the ask tunnel's request.
    expect(metrics).toContain(`warden_egress_connections_total{tenant="${TENANT}",decision="allow"} 6`);
    expect(metrics).toContain(`warden_egress_connections_total{tenant="${TENANT}",decision="deny"} 1`);
    expect(metrics).toContain(`warden_egress_connections_total{tenant="${TENANT}",decision="ask→allow"} 1`);

    second.child.kill("SIGTERM");
    expect(await second.exited).toBe(0);
    expect(await egressOf(kept)).toEqual([]);
    expect(await egressOf(gatewayGone)).toEqual([]);
  }, 300_000);
});

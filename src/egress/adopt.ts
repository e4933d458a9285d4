/**
 * Taking over a session's egress after the controller restarted (`warden serve`'s adoption,
 * src/server/sessions/reconcile.ts): the sandbox still sits on its `--internal` network, and its gateway,
 * when it still runs, still enforces the session's rules. Adoption finds that gateway by its
 * labels and its place on the sandbox's network, follows its records again (one audit record per
 * connection: those that ended while no controller was attached are replayed by the gateway,
 * which keeps every record until a controller acknowledges it), answers its `ask` questions again, and gives back the proxy variables for the
 * session's commands. A gateway that is gone or stopped is not replaced: the session keeps no
 * network at all (the internal network has no other route), never an open one.
 */
import type Docker from "dockerode";
import { type AllowlistOptions, type EgressGateway, egressGatewayOf } from "./gateway.js";
import { GATEWAY_PORT, ROLE_LABEL, removeEgressResources, SESSION_LABEL } from "./gateway-container.js";
import { attachGatewayStdio } from "./gateway-stdio.js";
import { removeSessionCa, sessionCaPath } from "./session-ca.js";

/** An adopted session's egress: `alive` false when its gateway was gone (then `env` is empty). */
export interface AdoptedEgress extends EgressGateway {
  alive: boolean;
}

/**
 * The egress of session `sessionId` whose sandbox is on `networkName`. Its gateway carries
 * `gatewaySessionId` (default `sessionId`) under SESSION_LABEL: a sandbox claimed from the warm
 * pool keeps its spare's `pool-<uuid>`, and so does the spare's gateway. With a running gateway so
 * labelled on that network: its proxy variables, and `network.onConnection` gets its records from
 * now on, first those no controller acknowledged. Without one: `alive` false, no variables, and a
 * stopped gateway so labelled is removed now. `close` (after the sandbox container is removed)
 * removes the gateway and the network, as a new session's does. Rejects with the engine's errors
 * of the list call.
 */
export async function adoptEgressGateway(
  docker: Docker,
  input: { sessionId: string; gatewaySessionId?: string; networkName: string; network: AllowlistOptions },
): Promise<AdoptedEgress> {
  const { sessionId, networkName, network } = input;
  const labelId = input.gatewaySessionId ?? sessionId;
  const listed = await docker.listContainers({
    all: true,
    filters: { label: [`${ROLE_LABEL}=gateway`, `${SESSION_LABEL}=${labelId}`] },
  });
  let live: { id: string; address: string } | undefined;
  for (const c of listed) {
    const address = c.NetworkSettings?.Networks?.[networkName]?.IPAddress;
    if (c.State === "running" && address && !live) live = { id: c.Id, address };
    else await removeEgressResources(docker, c.Id, undefined);
  }
  const remove = (containerId: string | undefined) =>
    removeEgressResources(docker, containerId, networkName).then(() => removeSessionCa(labelId));
  const caBundlePath = sessionCaPath(labelId);
  if (!live) {
    const gone = { networkName, containerId: "", address: "", proxyUrl: "", caBundlePath };
    return Object.assign(
      egressGatewayOf(gone, undefined, network, () => remove(undefined)),
      { alive: false },
    );
  }
  // With stdin too: its `ask` questions are answered by this controller's approver from now on.
  // And a replay: the records of connections that ended while no controller was attached.
  const stdio = await attachGatewayStdio(docker, docker.getContainer(live.id), {
    binding: { sessionId, network },
    replay: true,
  });
  const proxyUrl = `http://${live.address}:${GATEWAY_PORT}`;
  const found = { networkName, containerId: live.id, address: live.address, proxyUrl, caBundlePath };
  // Object.assign, not a spread: the gateway's `closed` getter stays one.
  return Object.assign(
    egressGatewayOf(found, stdio, network, () => remove(live.id)),
    { alive: true },
  );
}

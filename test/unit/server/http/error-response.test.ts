/**
 * The status mapping of `warden serve`'s errors (src/server/http/errors.ts toErrorResponse): no room in
 * the backend is 503 NO_ROOM with Retry-After (the error's own, else 10 s), a tenant quota stays 429.
 */
import { describe, expect, it } from "vitest";
import { fromDockerError, NoRoomError, SandboxError } from "../../../../src/errors.js";
import {
  PodUnschedulableError,
  ResourceQuotaExceededError,
  startTimeoutError,
} from "../../../../src/sandbox/kubernetes/index.js";
import { toErrorResponse } from "../../../../src/server/http/errors.js";
import { QuotaExceededError } from "../../../../src/server/tenancy/errors.js";

describe("toErrorResponse", () => {
  it("answers the engine's used-up address pools (its 404) with 503 NO_ROOM naming the cause and the fixes (attack 37 F3)", () => {
    // The engine's exact answer (Docker 20.10) to a network create when its default pools are used up.
    const detail =
      "could not find an available, non-overlapping IPv4 address pool among the defaults to assign to the network";
    const engineError = Object.assign(new Error(`(HTTP code 404) unexpected - ${detail} `), {
      statusCode: 404,
      json: { message: detail },
    });
    const err = fromDockerError(engineError, { what: "creating the sandbox" });
    expect(err).toBeInstanceOf(NoRoomError);
    const message =
      `creating the sandbox: the Docker engine has no address pool left for the session's egress network (${detail}). ` +
      "Each session with network egress takes one network from the engine's default address pools (30 on a default engine). " +
      "Close networked sessions or remove unused networks, raise the engine's pools (default-address-pools in daemon.json), " +
      "or lower warden serve's maxNetworkedSessions below them.";
    expect(toErrorResponse(err)).toEqual({
      status: 503,
      body: { code: "NO_ROOM", message: `${message} Retry in 10 s (Retry-After).` },
      retryAfterSeconds: 10,
    });
    // The older engines' words too; any other 404 stays NOT_FOUND.
    const old = {
      statusCode: 404,
      json: { message: "all predefined address pools have been fully subnetted" },
    };
    expect(fromDockerError(old, { what: "x" }).code).toBe("NO_ROOM");
    expect(fromDockerError({ statusCode: 404, json: { message: "no such image" } }, { what: "x" }).code).toBe(
      "NOT_FOUND",
    );
  });

  it("answers an engine network with no address left (its 500 when the gateway starts) with 503 NO_ROOM naming the network and the fixes", () => {
    // The engine's exact answer (Docker 20.10) to starting a container on a network whose
    // addresses are all taken: the gateways' egress network, a /24 under /24 address pools.
    const detail =
      "no available IPv4 addresses on this network's address pools: bridge (550308188ebc4e2b09a55b8b0b0fb1d4e3c8a0e1f1c1d6d2e0a3c4b5d6e7f801)";
    const engineError = Object.assign(new Error(`(HTTP code 500) server error - ${detail} `), {
      statusCode: 500,
      json: { message: detail },
    });
    const err = fromDockerError(engineError, { what: "creating the sandbox" });
    expect(err).toBeInstanceOf(NoRoomError);
    const message =
      `creating the sandbox: the engine network 'bridge' has no address left for another container (${detail}). ` +
      "Each session with network egress puts its gateway on its egress network (the engine's default bridge unless --egress-network or network.egressNetworks names another), one address each. " +
      "Close networked sessions or remove other containers from 'bridge', name an egress network with a larger subnet, " +
      "or lower warden serve's maxNetworkedSessions below its free addresses.";
    expect(toErrorResponse(err)).toEqual({
      status: 503,
      body: { code: "NO_ROOM", message: `${message} Retry in 10 s (Retry-After).` },
      retryAfterSeconds: 10,
    });
    // Any other 500 of the engine stays an internal error.
    expect(
      fromDockerError({ statusCode: 500, json: { message: "driver failed" } }, { what: "x" }),
    ).toBeInstanceOf(SandboxError);
  });

  it("answers no room (unscheduled, withdrawn, quota used up) with 503 NO_ROOM and Retry-After 10, repeated in the message", () => {
    const errors = [
      startTimeoutError("ns", "warden-x", 6000, {
        detail: "0/1 nodes are available: 1 Insufficient cpu.",
        unscheduled: true,
      }),
      new PodUnschedulableError("ns", "warden-x", "0/1 nodes are available: 1 Insufficient cpu."),
      new ResourceQuotaExceededError("creating Pod ns/warden-x", "exceeded quota: q"),
    ];
    for (const err of errors) {
      expect(toErrorResponse(err)).toEqual({
        status: 503,
        body: { code: "NO_ROOM", message: `${err.message} Retry in 10 s (Retry-After).` },
        retryAfterSeconds: 10,
      });
    }
  });

  it("takes the error's own wait (the warm pool's back-off) when it has one", () => {
    const err = new NoRoomError("No node takes the Pod.");
    err.retryAfterSeconds = 4;
    expect(toErrorResponse(err)).toEqual({
      status: 503,
      body: { code: "NO_ROOM", message: "No node takes the Pod. Retry in 4 s (Retry-After)." },
      retryAfterSeconds: 4,
    });
  });

  it("keeps a tenant quota at 429 with its Retry-After, a start timeout with room at 500 without one", () => {
    expect(toErrorResponse(new QuotaExceededError("maxSessions (2) reached.", 5))).toEqual({
      status: 429,
      body: { code: "RATE_LIMITED", message: "maxSessions (2) reached." },
      retryAfterSeconds: 5,
    });
    const slow = startTimeoutError("ns", "warden-x", 6000, { detail: "ContainerCreating" });
    expect(slow).toBeInstanceOf(SandboxError);
    expect(toErrorResponse(slow)).toEqual({
      status: 500,
      body: { code: "SANDBOX_ERROR", message: slow.message },
    });
  });
});

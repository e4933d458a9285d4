import { describe, expect, it } from "vitest";
import { InvalidArgumentError } from "../../../src/errors.js";
import { openSession, type SessionDependencies } from "../../../src/session/index.js";
import { OPT_IN_TOOL_NAMES, optInTools } from "../../../src/tools/index.js";
import { FakeSandbox } from "../../helpers/fake-sandbox.js";
import { echoTool, fakeSpill } from "../../helpers/pipeline-fakes.js";

function deps(counts: { created: number; destroyed: number; disposed: number }): SessionDependencies {
  return {
    createSandbox: async (_spec, identity) => {
      counts.created++;
      const sandbox = new FakeSandbox({ info: { sessionId: identity.sessionId ?? "" } });
      sandbox.destroy = async () => {
        counts.destroyed++;
      };
      return sandbox;
    },
    createSpillStore: () => ({
      ...fakeSpill(),
      dispose: async () => {
        counts.disposed++;
      },
    }),
    builtinTools: () => [echoTool(), echoTool({ name: "bash", description: "Run bash" })],
  };
}

describe("openSession", () => {
  it("enables the selected tools, exposes their provider schema and runs batches", async () => {
    const counts = { created: 0, destroyed: 0, disposed: 0 };
    const session = await openSession(
      { sessionId: "s-1", toolSelection: { excludeTools: ["bash"] } },
      deps(counts),
    );
    expect(session.id).toBe("s-1");
    expect(session.sandbox.info.sessionId).toBe("s-1");
    expect(session.enabledTools).toEqual(["echo"]);
    expect(session.providerTools().map((t) => t.function.name)).toEqual(["echo"]);
    const results = await session.runToolCalls([
      { id: "1", name: "echo", arguments: { text: "hi" } },
      { id: "2", name: "bash", arguments: { text: "ls" } },
    ]);
    expect(results.map((r) => r.content[0])).toEqual([
      { type: "text", text: "hi" },
      { type: "text", text: "Tool bash not found" },
    ]);
    await session.close();
  });

  it("closes idempotently: the sandbox is destroyed and spill files removed once", async () => {
    const counts = { created: 0, destroyed: 0, disposed: 0 };
    {
      await using session = await openSession({}, deps(counts));
      await session.close();
      await session.close();
    }
    expect(counts).toEqual({ created: 1, destroyed: 1, disposed: 1 });
  });

  it("registers opt-in tools (the process tool) but enables them only when --tools names them", async () => {
    const counts = { created: 0, destroyed: 0, disposed: 0 };
    const withProcess: SessionDependencies = { ...deps(counts), optInTools: optInTools };
    expect(OPT_IN_TOOL_NAMES).toEqual(optInTools().map((t) => t.name));
    await using plain = await openSession({}, withProcess);
    expect(plain.enabledTools).toEqual(["echo", "bash"]);
    await using asked = await openSession({ toolSelection: { tools: ["bash", "process"] } }, withProcess);
    expect(asked.enabledTools).toEqual(["bash", "process"]);
    expect(asked.providerTools().map((t) => t.function.name)).toEqual(["bash", "process"]);
  });

  it("rejects an unknown --tools name before any sandbox is created", async () => {
    const counts = { created: 0, destroyed: 0, disposed: 0 };
    await expect(openSession({ toolSelection: { tools: ["nope"] } }, deps(counts))).rejects.toThrow(
      InvalidArgumentError,
    );
    expect(counts.created).toBe(0);
  });

  it("destroys the sandbox again when the spill store cannot be created", async () => {
    const counts = { created: 0, destroyed: 0, disposed: 0 };
    const failing: SessionDependencies = {
      ...deps(counts),
      createSpillStore: () => {
        throw new Error("no space for spill dir");
      },
    };
    await expect(openSession({}, failing)).rejects.toThrow("no space for spill dir");
    expect(counts).toEqual({ created: 1, destroyed: 1, disposed: 0 });
  });

  it("hands the spill caps to the spill store and keeps them out of the sandbox's options", async () => {
    const counts = { created: 0, destroyed: 0, disposed: 0 };
    const seen: { sandbox?: object; spill?: object } = {};
    const base = deps(counts);
    const session = await openSession(
      { sessionId: "s-2", spillDir: "/d", spillMaxBytes: 1000, spillMaxBytesHint: "--spill-max-bytes" },
      {
        ...base,
        createSandbox: (spec, identity, call) => {
          seen.sandbox = { ...spec, ...identity, ...call };
          return base.createSandbox(spec, identity, call);
        },
        createSpillStore: (options) => {
          seen.spill = options;
          return base.createSpillStore(options);
        },
      },
    );
    expect(seen.spill).toEqual({
      sessionId: "s-2",
      dir: "/d",
      maxBytes: 1000,
      maxBytesHint: "--spill-max-bytes",
      shared: undefined,
    });
    expect(seen.sandbox).toEqual({ sessionId: "s-2" });
    await session.close();
  });

  it("hands the sandbox exactly its own fields: no hook, env, tool selection or spill setting", async () => {
    const counts = { created: 0, destroyed: 0, disposed: 0 };
    const base = deps(counts);
    let seen: object | undefined;
    const controller = new AbortController();
    const session = await openSession(
      {
        sessionId: "s-3",
        tenant: "t-3",
        sandbox: { image: "img:3", limits: { pids: 64 } },
        signal: controller.signal,
        toolSelection: { tools: ["echo"] },
        beforeToolCall: [async () => undefined],
        afterToolCall: [],
        env: { GREETING: "hi" },
        spillMaxBytes: 5,
      },
      {
        ...base,
        createSandbox: (spec, identity, call) => {
          seen = { ...spec, ...identity, ...call };
          return base.createSandbox(spec, identity, call);
        },
      },
    );
    expect(seen).toEqual({
      sessionId: "s-3",
      tenant: "t-3",
      image: "img:3",
      limits: { pids: 64 },
      signal: controller.signal,
    });
    await session.close();
  });

  it("refuses a mount at /spill, where spill handles live, before any container exists", async () => {
    const counts = { created: 0, destroyed: 0, disposed: 0 };
    for (const containerPath of ["/spill", "/spill/x"]) {
      await expect(
        openSession({ sandbox: { mounts: [{ hostPath: "/tmp", containerPath }] } }, deps(counts)),
      ).rejects.toThrow(
        `mounts[0].containerPath ${containerPath} is under /spill/, which names spill files; pick another path.`,
      );
    }
    const ok = await openSession(
      { sandbox: { mounts: [{ hostPath: "/tmp", containerPath: "/spillover" }] } },
      deps(counts),
    );
    expect(counts.created).toBe(1);
    await ok.close();
  });
});

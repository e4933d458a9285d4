/**
 * A DNS test host for the rebinding tests: a container on one of the testbed's networks answering
 * UDP DNS on port 53 from a table the test sets (`setAnswers`), so a name's answer can change
 * between two queries. For a name in the table it answers A queries with one address each (the
 * k-th A query since the table was set gets `addresses[k]`, the last one repeated after the end;
 * `cycle` starts over instead), TTL 0 so no cache keeps it, and other types with no record
 * (NOERROR, empty); any other name gets NXDOMAIN. Every query is logged (`queries`). Python's
 * stdlib only, in the sandbox image; one question per query, as resolvers send.
 */
import type Docker from "dockerode";
import { DEFAULT_IMAGE, getDocker } from "../../../src/sandbox/index.js";
import { execIn } from "./testbed.js";

const SERVER = String.raw`
import socket
state = {"text": None, "count": {}}
def table():
    try: text = open("/tmp/answers").read()
    except FileNotFoundError: text = ""
    if text != state["text"]: state["text"], state["count"] = text, {}
    rows = [line.split() for line in text.splitlines() if not line.startswith("#")]
    return {r[0].lower(): (r[1], r[2:]) for r in rows if len(r) >= 3}
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.bind(("", 53))
open("/tmp/ready", "w").write("ok")
while True:
    q, peer = s.recvfrom(512)
    if len(q) < 17 or q[2] & 0x80: continue
    i, labels = 12, []
    while i < len(q) and q[i]: labels.append(q[i + 1:i + 1 + q[i]].decode(errors="replace")); i += 1 + q[i]
    qtype, name, t, answers = int.from_bytes(q[i + 1:i + 3], "big"), ".".join(labels).lower(), table(), []
    if name in t and qtype == 1:
        mode, addrs = t[name]
        k = state["count"].get(name, 0); state["count"][name] = k + 1
        answers = [addrs[k % len(addrs)] if mode == "cycle" else addrs[min(k, len(addrs) - 1)]]
    with open("/tmp/dns.log", "a") as f: f.write(f"{qtype} {name} {' '.join(answers) or '-'}\n")
    flags = 0x8580 | (q[2] & 1) << 8 | (0 if name in t else 3)
    head = q[:2] + flags.to_bytes(2, "big") + b"\x00\x01" + len(answers).to_bytes(2, "big") + bytes(4)
    body = q[12:i + 5]
    for a in answers: body += b"\xc0\x0c\x00\x01\x00\x01" + bytes(4) + b"\x00\x04" + socket.inet_aton(a)
    s.sendto(head + body, peer)
`;

/** One query the DNS test host got: its type (1 = A, 28 = AAAA), name and the address answered. */
export interface DnsQuery {
  type: number;
  name: string;
  /** The address answered, or undefined when the answer held none. */
  answer?: string;
}

/** A running DNS test host. */
export interface DnsTestHost {
  /** Its address on the network it was started on (what `network.resolvers` takes). */
  address: string;
  /**
   * Sets `name`'s answers (and starts its count of A queries over): `sequence` answers the k-th A
   * query with addresses[k] and then the last one for ever, `cycle` goes round them.
   */
  setAnswers(name: string, mode: "sequence" | "cycle", addresses: string[]): Promise<void>;
  /** Every query so far, in order. */
  queries(): Promise<DnsQuery[]>;
  dispose(): Promise<void>;
}

/** Starts a DNS test host on engine network `network` (remove it with `dispose` before the network). */
export async function startDnsTestHost(network: string): Promise<DnsTestHost> {
  const docker = getDocker();
  const container: Docker.Container = await docker.createContainer({
    Image: DEFAULT_IMAGE,
    User: "0:0",
    Cmd: ["python3", "-c", SERVER],
    Labels: { "io.warden.test": "egress" },
    HostConfig: { NetworkMode: network },
  });
  const dispose = () =>
    container.remove({ force: true }).then(
      () => {},
      () => {},
    );
  try {
    await container.start();
    // Until the server is up (the hook's timeout, not a count of polls, bounds the wait).
    while ((await execIn(container, ["cat", "/tmp/ready"]).catch(() => "")) !== "ok")
      await new Promise((r) => setTimeout(r, 100));
    const address = (await container.inspect()).NetworkSettings.Networks[network]?.IPAddress ?? "";
    let generation = 0;
    return {
      address,
      setAnswers: async (name, mode, addresses) => {
        generation += 1;
        // A new generation line makes the table differ from the last one even with the same rows.
        const lines = [
          `# ${generation}`,
          `${name} ${mode === "cycle" ? "cycle" : "seq"} ${addresses.join(" ")}`,
        ];
        await execIn(container, [
          "sh",
          "-c",
          'printf "%s\\n" "$@" > /tmp/answers.new && mv /tmp/answers.new /tmp/answers',
          "sh",
          ...lines,
        ]);
      },
      queries: async () =>
        (await execIn(container, ["sh", "-c", "cat /tmp/dns.log 2>/dev/null; true"]))
          .split("\n")
          .filter((l) => l !== "")
          .map((l) => {
            const [type, name, answer] = l.split(" ");
            return { type: Number(type), name: name ?? "", ...(answer && answer !== "-" ? { answer } : {}) };
          }),
      dispose,
    };
  } catch (err) {
    await dispose();
    throw err;
  }
}

/**
 * The gateway's relay (images/gateway/warden-relay) in the gateway image, with Squid replaced by a
 * sleeping stand-in and its ask helper (warden-ask) fed questions by a script: each question
 * reaches stdout as `WARDEN-ASK <id> <host> <port> <client port>`, an answer on stdin reaches the
 * helper with its outcome note, and it fails closed: no answer within WARDEN_ASK_DEADLINE_MS is
 * `gateway-timeout`, and once stdin (the controller) is gone every open and later question is
 * `no-controller`.
 */
import { spawn } from "node:child_process";
import { createInterface } from "node:readline";
import { expect, it } from "vitest";
import { GATEWAY_IMAGE } from "../../../src/egress/index.js";
import { describeEngine } from "../../helpers/engine.js";

/** Questions 1-4 from a script (stdin kept open between them), the relay on the container's stdio. */
const SCRIPT = String.raw`
set -eu
d=$(mktemp -d)
printf '#!/bin/sh\nexec sleep 600\n' > "$d/squid"; chmod +x "$d/squid"
: > "$d/log"
# A background job's stdin is /dev/null unless it is handed another descriptor.
exec 3<&0
PATH="$d:$PATH" WARDEN_ASK_DEADLINE_MS=1500 /usr/local/bin/warden-relay /dev/null "$d/log" "$d/sock" <&3 3<&- &
exec 3<&-
while [ ! -S "$d/sock" ]; do sleep 0.05; done
(printf '1 ask.test 443 40112\n'; sleep 1; printf '2 ask.test 80 40113\n'; sleep 4
 printf '3 ask.test 443 40114\n'; sleep 3; printf '4 ask.test 443 40115\n'; sleep 1) |
  /usr/local/bin/warden-ask "$d/sock" >&2
`;

describeEngine("egress gateway relay", () => {
  it("relays questions and answers, and refuses on its deadline and once the controller is gone", async () => {
    const child = spawn(
      "docker",
      ["run", "--rm", "-i", "--network", "none", "--entrypoint", "sh", GATEWAY_IMAGE, "-c", SCRIPT],
      { stdio: ["pipe", "pipe", "pipe"] },
    );
    const questions: string[] = [];
    const answers: string[] = [];
    createInterface({ input: child.stderr }).on("line", (l) => answers.push(l));
    const ids: string[] = [];
    createInterface({ input: child.stdout }).on("line", (line) => {
      // Ids are `q`, a counter in hex and 64 random bits; the test names them by their order.
      const id = /^WARDEN-ASK (q[0-9a-f]+) /.exec(line)?.[1] ?? "";
      ids.push(id);
      questions.push(line.replace(id, `q${ids.length}`));
      if (line.endsWith(" ask.test 443 40112")) {
        // An answer to an id that was not asked (the counter alone, as older relays made them) is ignored.
        child.stdin.write("WARDEN-ANSWER q1 OK once\n");
        child.stdin.write(`WARDEN-ANSWER ${id} OK once\n`);
      }
      // q2 stays unanswered (deadline); at q3 the controller goes away.
      if (ids.length === 3) child.stdin.end();
    });
    const code = await new Promise<number | null>((resolve) => child.on("close", resolve));
    expect(code).toBe(0);
    expect(ids).toEqual([
      expect.stringMatching(/^q1[0-9a-f]{16}$/),
      expect.stringMatching(/^q2[0-9a-f]{16}$/),
      expect.stringMatching(/^q3[0-9a-f]{16}$/),
    ]);
    expect(questions).toEqual([
      "WARDEN-ASK q1 ask.test 443 40112",
      "WARDEN-ASK q2 ask.test 80 40113",
      "WARDEN-ASK q3 ask.test 443 40114",
    ]);
    expect(answers).toEqual([
      "1 OK warden_ask=once",
      "2 ERR warden_ask=gateway-timeout",
      "3 ERR warden_ask=no-controller",
      "4 ERR warden_ask=no-controller",
    ]);
  }, 60_000);
});

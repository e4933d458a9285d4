/**
 * images/gateway/warden-sni-match, the gateway's Squid helper, run here with the host's Perl: the
 * exact answers for the two modes, and the lines an SNI holding a space or another odd value makes
 * (Squid hands the SNI over unescaped, found by an attack on the gateway). Squid ends each line
 * with the ACL's arguments, "-" when it has none.
 */
import { execFileSync } from "node:child_process";
import { describe, expect, it } from "vitest";

const HELPER = "images/gateway/warden-sni-match";
const answers = (mode: string, lines: string[]) =>
  execFileSync("perl", [HELPER, mode], { input: `${lines.join("\n")}\n` })
    .toString()
    .trim()
    .split("\n");

describe("warden-sni-match", () => {
  it("tunnel: OK only when the SNI is the CONNECT host, a plain DNS name, with exactly its fields", () => {
    expect(
      answers("tunnel", [
        "allowed.test allowed.test -",
        "Allowed.Test allowed.test -",
        "allowed.test other.test -",
        "allowed.test - -",
        "- - -",
        // The SNI "allowed.test allowed.test" and "allowed.test -": once OK, as three fields.
        "allowed.test allowed.test allowed.test -",
        "allowed.test allowed.test - -",
        "allowed.test  allowed.test -",
        "allowed.test%20x allowed.test%20x -",
        "allowed.test allowed.test",
      ]),
    ).toEqual(["OK", "OK", "ERR", "ERR", "ERR", "ERR", "ERR", "ERR", "ERR", "ERR"]);
  });

  it("request: OK only when the host and the Host header (port dropped, '-' = absent) name the SNI's host", () => {
    expect(
      answers("request", [
        "allowed.test allowed.test allowed.test -",
        "allowed.test allowed.test allowed.test:443 -",
        "allowed.test allowed.test - -",
        "other.test allowed.test allowed.test -",
        "allowed.test allowed.test other.test -",
        "allowed.test allowed.test allowed.test allowed.test -",
        "allowed.test allowed.test  other.test -",
        "allowed.test allowed.test allowed.test x",
      ]),
    ).toEqual(["OK", "OK", "OK", "ERR", "ERR", "ERR", "ERR", "ERR"]);
  });

  it("refuses to start without a mode", () => {
    expect(() => execFileSync("perl", [HELPER], { input: "", stdio: "pipe" })).toThrow(
      /usage: warden-sni-match tunnel\|request/,
    );
  });
});

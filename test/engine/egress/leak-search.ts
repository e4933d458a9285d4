/**
 * The search of the secret leak tests (secret-leaks-*.test.ts): the forms a secret's value could
 * take in a text (the value, its URL encoding, its base64 at each of the three byte alignments, in
 * the standard and the URL-safe alphabet), which of them a set of named texts holds, and the
 * headers the egress testbed's public host received (the proof that the value was used, so that
 * finding it nowhere else means something).
 */
import type { EgressTestbed } from "./testbed.js";

/**
 * A test value that URL-encodes differently from itself (`/`, `+`, `=` and a space become
 * `%2F`, `%2B`, `%3D`, `%20`, or `+` in a form): a secret value is visible ASCII or space without
 * `"` or `\`.
 */
export function testSecretValue(tag: string): string {
  return `ghp_${tag}/Leak+0123 456789=abcdefXYZ`;
}

/**
 * The forms of `value` searched for: the value, its URL encoding (`encodeURIComponent`) and form
 * encoding (`URLSearchParams`), and its base64 as it
 * appears inside a longer base64 text: for each alignment k (0, 1, 2 bytes before it) the
 * characters fully determined by the value's own bytes, standard and URL-safe alphabets.
 * Keys name the form (for the failure message).
 */
export function encodingsOf(value: string): Record<string, string> {
  const forms: Record<string, string> = {
    value,
    "url-encoded": encodeURIComponent(value),
    "form-encoded": new URLSearchParams({ v: value }).toString().slice(2),
  };
  for (const k of [0, 1, 2]) {
    const b64 = Buffer.concat([Buffer.alloc(k), Buffer.from(value)])
      .toString("base64")
      .replace(/=+$/, "");
    // Characters before ceil(4k/3) mix in the k leading bytes; the last two may mix in padding.
    const inner = b64.slice(Math.ceil((4 * k) / 3), -2);
    forms[`base64@${k}`] = inner;
    const urlSafe = inner.replaceAll("+", "-").replaceAll("/", "_");
    if (urlSafe !== inner) forms[`base64url@${k}`] = urlSafe;
  }
  return forms;
}

/** `surface: form` for every form of `value` found in each named text; [] when it is nowhere. */
export function leaksOf(value: string, texts: Record<string, string>): string[] {
  const forms = Object.entries(encodingsOf(value));
  return Object.entries(texts).flatMap(([surface, text]) =>
    forms.filter(([, needle]) => text.includes(needle)).map(([form]) => `${surface}: ${form}`),
  );
}

/** Header `header` of each request the public test host received for `path`, in order. */
export async function receivedHeaders(
  bed: EgressTestbed,
  path: string,
  header = "authorization",
): Promise<(string | undefined)[]> {
  return (await bed.hostLog("public", "headers"))
    .split("\n")
    .filter(Boolean)
    .map((l) => JSON.parse(l) as [string, Array<[string, string]>])
    .filter(([p]) => p === path)
    .map(([, h]) => h.find(([k]) => k.toLowerCase() === header)?.[1]);
}

/**
 * `[METHOD=M] python3 fetch.py URL [NAME=VALUE…]`: a request (default GET) with each header NAME:
 * VALUE (default `Authorization=Bearer $GITHUB_TOKEN`; `$VAR` expanded from the sandbox's
 * environment), printing `OK <status>` (then the body, for a method other than GET), or `ERR
 * <status>` and then the error page (the gateway's pages are more text the model reads).
 */
export const FETCH_PY = `
import os, sys, urllib.request, urllib.error
pairs = [a.split("=", 1) for a in (sys.argv[2:] or ["Authorization=Bearer $GITHUB_TOKEN"])]
method = os.environ.get("METHOD", "GET")
req = urllib.request.Request(sys.argv[1], method=method, headers={k: os.path.expandvars(v) for k, v in pairs})
try:
    with urllib.request.urlopen(req, timeout=30) as r:
        print("OK", r.status)
        if method != "GET": print(r.read().decode(errors="replace"))
except urllib.error.HTTPError as e: print("ERR", e.code); print(e.read().decode(errors="replace"))
except Exception as e: print("ERR", type(e).__name__, e)
`;

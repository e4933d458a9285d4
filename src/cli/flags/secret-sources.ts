/**
 * Where a CLI secret's value comes from (`--secret NAME=env:VAR`, `--secret NAME=file:PATH`) and the
 * checks made on it. A value, or any part of it, is never put in a message: the messages name the
 * variable or the file and what is wrong with it.
 */
import { open } from "node:fs/promises";
import { MAX_SECRET_BYTES, type SecretValueSource, secretValueProblem } from "../../egress/index.js";
import { InvalidArgumentError } from "../../errors.js";

/** A file's text with its one trailing line break (`\n` or `\r\n`, as `echo` and editors write) removed. */
function withoutFinalBreak(text: string): string {
  return text.replace(/\r?\n$/, "");
}

/**
 * Why `value` cannot be sent (egress's secretValueProblem: visible ASCII and space, no `"` or `\`, at
 * most MAX_SECRET_BYTES), worded without it, or null. `where` names its origin.
 */
function valueProblem(value: string, where: string): string | null {
  if (value === "") return `${where} is empty; write the value into it`;
  const problem = secretValueProblem(value);
  return (
    problem &&
    `the value in ${where} cannot be sent: ${problem}; fix it where it is kept (no message shows it)`
  );
}

/**
 * The value of `--secret NAME=env:VAR`, read once now from `env` (warden's own environment): later
 * changes to the variable are not seen. Throws InvalidArgumentError (prefixed `flag`) naming the
 * variable when it is unset or empty, or holds a value a header cannot carry (egress's
 * secretValueProblem: longer than MAX_SECRET_BYTES, a control or non-ASCII character, `"` or `\`).
 */
export function envSecretValue(flag: string, variable: string, env: NodeJS.ProcessEnv): SecretValueSource {
  const value = env[variable];
  if (value === undefined || value === "")
    throw new InvalidArgumentError(
      `${flag}: the environment variable ${variable} is not set or empty; export it in the shell that runs warden.`,
    );
  const problem = valueProblem(value, `the environment variable ${variable}`);
  if (problem) throw new InvalidArgumentError(`${flag}: ${problem}.`);
  return () => value;
}

type FileRead = { value: string } | { problem: string };

/**
 * Reads a secret's file: a regular file of at most MAX_SECRET_BYTES (and a final line break, which
 * is removed), not empty. Its content is not judged here (see fileSecretValue).
 */
async function readSecretFile(path: string): Promise<FileRead> {
  let handle: Awaited<ReturnType<typeof open>> | undefined;
  try {
    handle = await open(path, "r");
    const st = await handle.stat();
    if (!st.isFile()) return { problem: `${path} is not a regular file; name a file holding the value` };
    if (st.size > MAX_SECRET_BYTES + 2)
      return {
        problem: `${path} has ${st.size} bytes, more than ${MAX_SECRET_BYTES}; a secret's file holds its value only`,
      };
    const value = withoutFinalBreak(await handle.readFile("utf8"));
    return value === "" ? { problem: `${path} is empty; write the value into it` } : { value };
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code ?? "error";
    return { problem: `cannot read ${path} (${code}); name a readable file holding the value` };
  } finally {
    await handle?.close();
  }
}

/**
 * The value of `--secret NAME=file:PATH` (`path` absolute), read at each use, so rewriting the file
 * rotates the secret and removing it (or emptying it) revokes it for the next request: a file that
 * cannot be read, is empty, is larger than MAX_SECRET_BYTES or is not a regular file gives
 * undefined (the request is refused as `revoked`); a value a header cannot carry is given as it is,
 * for the gateway's decision to refuse as `bad-value`. One trailing line break is not part of the
 * value. The file is read once now as well: rejects with InvalidArgumentError (prefixed `flag`,
 * naming the file and what is wrong) when it is not usable at start.
 */
export async function fileSecretValue(flag: string, path: string): Promise<SecretValueSource> {
  const first = await readSecretFile(path);
  const problem = "problem" in first ? first.problem : valueProblem(first.value, path);
  if (problem) throw new InvalidArgumentError(`${flag}: ${problem}.`);
  return async () => {
    const now = await readSecretFile(path);
    return "value" in now ? now.value : undefined;
  };
}

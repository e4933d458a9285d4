/**
 * Helpers of read for a sandbox file, both only on rare paths: Pi 0.73.1's other spellings of a name
 * that does not exist (paths.ts readPathVariants), and the byte length of a line over 50 KiB.
 */
import { omitUndefined } from "../util/index.js";
import { isWithinRoots, normalizeToolPath, readPathVariants } from "./paths.js";
import type { ToolContext } from "./types.js";

/**
 * The canonical path of the first of Pi's other spellings of `path` that exists (readPathVariants),
 * confined to the sandbox's roots. read opens it when `path` itself does not exist, so the policy
 * judges it too (src/policy/hook.ts): a variant may be a link to a file a rule denies.
 */
export async function existingVariant(
  path: string,
  ctx: Pick<ToolContext, "sandbox" | "signal">,
): Promise<string | undefined> {
  const { sandbox, signal } = ctx;
  const roots = sandbox.info.roots;
  // Variants are already normalised (resolveToolPath would turn the narrow no-break space back).
  for (const variant of readPathVariants(normalizeToolPath(path))) {
    if (!isWithinRoots(variant, roots)) continue;
    const canonical = await sandbox.realpath(variant, omitUndefined({ signal }));
    if (!isWithinRoots(canonical, roots)) continue;
    if ((await sandbox.stat(canonical, omitUndefined({ signal }))) !== null) return canonical;
  }
  return undefined;
}

/**
 * Byte length of one line of a sandbox file (without its newline), measured inside the sandbox with
 * awk in the C locale (bytes), for the note on a line over 50 KiB. Undefined when it cannot be measured.
 */
export async function measureLine(
  canonical: string,
  line: number,
  ctx: ToolContext,
): Promise<number | undefined> {
  let out = "";
  const result = await ctx.sandbox
    .exec(
      { argv: ["awk", `NR == ${line} { print length($0); exit }`, canonical] },
      {
        env: { LC_ALL: "C" },
        timeoutMs: 30_000,
        ...omitUndefined({ signal: ctx.signal }),
        onStdout: (c) => (out += c.toString()),
      },
    )
    .catch(() => undefined);
  const bytes = Number.parseInt(out.trim(), 10);
  return result?.exitCode === 0 && Number.isFinite(bytes) ? bytes : undefined;
}

/**
 * A session's secrets in `warden serve`: the names a POST /v1/sessions lists (`secrets: [{name,
 * env?, file?}]`) turned into the SessionSecret[] its NetworkOptions carry. Each reads the tenant's
 * store at every use: `value()` and `bindings` are the store's current ones, so a rotation applies
 * to the next request and a deletion refuses it (revoked), without restarting the session.
 */

import type { SecretBinding, SessionSecret } from "../../egress/index.js";
import { InvalidArgumentError } from "../../errors.js";
import { SecretsNotConfiguredError } from "./errors.js";
import type { SecretStore } from "./store.js";

/** One entry of a session's `secrets`: a name of the tenant's store, and where the sandbox sees its placeholder. */
export interface SessionSecretRequest {
  name: string;
  /** The environment variable holding the placeholder `{{NAME}}`; default the name; false: none. */
  env?: string | false;
  /** Absolute sandbox path of a file holding the placeholder. */
  file?: string;
}

/**
 * The SessionSecret[] of `requested` for `tenant`, reading `store` at each use. With `mustExist`
 * (a new session) a name the tenant's store does not have is an InvalidArgumentError naming it and
 * `secrets[i].name`; an adopted session's secret deleted meanwhile is kept, and refused as revoked.
 * A name listed twice is an InvalidArgumentError; no store configured, SecretsNotConfiguredError.
 */
export function sessionSecrets(
  store: SecretStore | undefined,
  tenant: string,
  requested: readonly SessionSecretRequest[],
  options: { mustExist: boolean },
): SessionSecret[] {
  if (requested.length === 0) return [];
  if (!store) throw new SecretsNotConfiguredError();
  const seen = new Set<string>();
  return requested.map((r, i) => {
    if (seen.has(r.name))
      throw new InvalidArgumentError({ field: `secrets[${i}].name`, problem: `${r.name} is listed twice.` });
    seen.add(r.name);
    if (options.mustExist && !store.info(tenant, r.name))
      throw new InvalidArgumentError({
        field: `secrets[${i}].name`,
        problem: `${r.name} is not a secret of tenant '${tenant}'; create it with PUT /v1/secrets/${r.name} first (GET /v1/secrets lists them).`,
      });
    const name = r.name;
    return {
      name,
      get bindings(): SecretBinding[] {
        return store.info(tenant, name)?.bindings ?? [];
      },
      ...(r.env !== undefined ? { env: r.env } : {}),
      ...(r.file !== undefined ? { file: r.file } : {}),
      value: () => store.value(tenant, name),
    };
  });
}

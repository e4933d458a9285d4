#!/usr/bin/env bash
# `npm run test:load [-- <vitest args>]`: the tests on a busy machine. A CPU hog (Debian's stress-ng)
# keeps twice as many runnable threads as there are cores busy while `npm test` runs, or
# `vitest run <args>` when args are given (a file list, `--project unit`). The tests must pass under
# it: none may depend on a wall-clock budget that load can break (speed is `npm run bench`'s).
# The hog is bounded twice: stress-ng's own --timeout, and it is stopped (its whole process group)
# when the tests end, fail or are interrupted. Installs stress-ng with apt-get when it is missing
# (Debian 12 and 13 both package it). Environment: WARDEN_LOAD_THREADS (default 2 × nproc),
# WARDEN_LOAD_MAX_S (the hog's own bound, default 5400 s).
set -euo pipefail
cd "$(dirname "$0")/.."

threads="${WARDEN_LOAD_THREADS:-$((2 * $(nproc)))}"
max_s="${WARDEN_LOAD_MAX_S:-5400}"

if ! command -v stress-ng >/dev/null 2>&1; then
  echo "test:load: installing stress-ng (apt-get)" >&2
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends stress-ng >/dev/null
fi

# A session of its own (setsid: not a process-group leader here, so it execs in place and $! is
# stress-ng's pid), so that stopping its group stops every stressor it forked.
setsid stress-ng --cpu "$threads" --cpu-method int64 --timeout "${max_s}s" --quiet &
hog=$!
stop_hog() {
  kill -TERM -- "-$hog" 2>/dev/null || true
  wait "$hog" 2>/dev/null || true
}
trap stop_hog EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
echo "test:load: stress-ng --cpu $threads (pid $hog, at most ${max_s} s) on $(nproc) cores" >&2

if [ "$#" -gt 0 ]; then
  npx vitest run "$@"
else
  npm test
fi

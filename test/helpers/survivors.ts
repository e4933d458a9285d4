/**
 * "Nothing the call started is still running", checked by behaviour instead of by process name: the
 * command under test starts `beating(tag)`, a loop that touches a marker file every 100 ms for as long
 * as it lives (under any name, in any process group); `stillBeating(tag)` removes the marker, waits
 * 0.5 s and prints `alive` when something touched it again, else `gone`.
 */

/** Shell: a loop that touches /tmp/beat-<tag> every 100 ms, forever (run it in the background). */
export function beating(tag: string): string {
  return `(while :; do : > /tmp/beat-${tag}; sleep 0.1; done)`;
}

/** Shell: prints `gone` when nothing touches /tmp/beat-<tag> for 0.5 s, `alive` otherwise. */
export function stillBeating(tag: string): string {
  return `rm -f /tmp/beat-${tag}; sleep 0.5; if [ -e /tmp/beat-${tag} ]; then echo alive; else echo gone; fi`;
}

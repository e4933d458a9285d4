/**
 * What every later call of a Kubernetes session is told once its channel's helper ended with an
 * exit status (pure, no I/O; pod-channel.ts reads the Pod and throws it). Such a channel is never
 * re-opened (pod-channel.ts): the helper ends so when the Pod is gone, when a command in the sandbox
 * killed it (`kill -KILL $PPID`, `kill -9 -1`), or when another warden controller took the Pod over
 * (its new helper kills every other process), and the last must not be fought over. The message
 * names the Pod as namespace/name in full, why, and what to do; Docker's "Sandbox container <id> is
 * not running." is not used here. Found by an attack on the Kubernetes backend (issue 18).
 */

/** The Pod as read after the helper ended: running, not reachable (and why), or the read failed. */
export type EndedPodState = { ok: true } | { ok: false; why: string } | { readError: string };

/**
 * The message for Pod `where` ("namespace/name") whose channel ended with `reason` (the
 * transport's: "the channel's helper in Pod … ended (<exit status>)"), given the Pod's `state`.
 */
export function channelEndedMessage(where: string, reason: string, state: EndedPodState): string {
  const next = "start a new session, and DELETE this one";
  if ("readError" in state)
    return `the exec channel to Pod ${where} ended (${reason}) and is not re-opened; reading the Pod failed (${state.readError}); ${next}.`;
  if (!state.ok)
    return `the sandbox Pod ${where} is gone: ${state.why}, as a GET of it said after its exec channel ended (${reason}); what ran in it and its files are lost; ${next}.`;
  return (
    `the exec channel to Pod ${where} ended (${reason}) while the Pod still runs: a command in the sandbox may have killed the channel's helper (e.g. kill -9 -1), ` +
    "or another warden controller took the Pod over; the channel is not re-opened, so two controllers never take a Pod from each other, and the Pod is left running for whoever holds it; " +
    `${next} (deleting it deletes the Pod).`
  );
}

// The seam through which something outside the call hears its audio (a recorder; see
// docs/call-session.md): a listener, not a step. The session hands it what it already has, on the
// call's own clock, and never waits on it; with no listener the per-frame path does no work for
// listeners at all (the list is null, not an empty array walked on every frame).
//
// Times are milliseconds since the call's session was created, on its clock, one clock for both
// directions, so two channels line up:
//
// - `callerFrame`: every frame of the caller's audio as the carrier delivered it, decoded from the
//   carrier's framing but in the stream's format (CallInfo.mediaFormat), at its arrival. Frames
//   the agent heard as silence (an answering machine's greeting) are still the caller's frames.
// - `played`: bytes the downlink sent toward the caller (agent replies, prompts, fallback and
//   voicemail audio, the padding of a last frame), in the stream's format, at the time they start
//   to play by the downlink's playout model (after whatever was still queued at the carrier).
// - `truncated`: a barge-in made the carrier drop what it held: whatever was `played` with a time
//   after `atMs` was never heard and is to be dropped by a listener that keeps what was heard.
//
// A listener must not block and must not write to the buffers it is handed (the same bytes go on
// to the agent or to the carrier); it copies what it keeps. One that throws is removed, and the
// call goes on.
export interface CallAudioListener {
  callerFrame(payload: Buffer, atMs: number): void;
  played(payload: Buffer, atMs: number): void;
  truncated(atMs: number): void;
}

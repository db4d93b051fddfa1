// What the call asks of its recording (docs/recordings.md), when it is recorded: the consent prompt
// to play before the agent speaks, pausing and resuming (agent functions, admin API), and giving it
// up when the consent cannot be played. The recorder itself hears the call as an audio listener
// (audio-listener.ts); this port is the rest. src/recording implements it; app.ts plugs it in.
import type { MediaFormat } from '../audio/format.js';
import type { RecordingConsent } from '../config/recording.js';
import type { AgentProfile } from '../config/types.js';
import type { CallAudioListener } from './audio-listener.js';

/** What became of a pause or resume: done, already so, or the call is not (or no longer) recorded. */
export type RecordingControlResult = 'done' | 'unchanged' | 'not_recorded';

export interface CallRecordingPort {
  /** Played to the caller before the agent speaks; null: none. */
  readonly consent: RecordingConsent;
  control(action: 'pause' | 'resume'): RecordingControlResult;
  /** The consent could not be played: the call goes on unrecorded, and what was written is removed. */
  abandon(reason: string): void;
}

/** A recorded call's listener and port, or null when the call is not recorded. */
export type RecordCall = (call: {
  callSid: string;
  mediaFormat: MediaFormat;
  profile: AgentProfile;
}) => { listener: CallAudioListener; port: CallRecordingPort } | null;

// What a call's session is given: the facts of the call (who, which profile, the stream's format, an
// outbound call's context) and what it works with (the agent dialer, the carrier's rules, metrics,
// prompts, listeners on its audio, the clock).
import type { Logger } from 'pino';
import type { MediaFormat } from '../../audio/format.js';
import type { AgentProfile } from '../../config/types.js';
import type { Metrics } from '../../metrics/metrics.js';
import type { CallRecord } from '../../store/call-record.js';
import type { DialAgent } from './agent-link.js';
import type { AgentQueue } from './agent-queue.js';
import type { CallLogInfo } from '../record/call-log.js';
import type { CallAudioListener } from '../audio-listener.js';
import type { DownlinkRules } from '../carrier-port.js';
import type { Clock } from '../clock.js';
import type { CallEventHub } from '../watch/events.js';
import type { PromptPlayer } from './fallback-audio.js';
import type { OutboundContext } from '../outbound/outbound-context.js';
import type { CallRecordingPort } from '../recording-port.js';
import type { CallSession } from './session.js';
import type { VoicemailRecordingSource } from '../outbound/voicemail-recordings.js';

/** The call's identity (as its record states it), its profile and its stream's format. */
export interface CallInfo extends CallLogInfo {
  profile: AgentProfile;
  mediaFormat: MediaFormat;
  /** Outbound calls: the campaign attempt, the contact's variables, answering-machine detection. */
  outbound?: OutboundContext;
  /** The campaign an outbound call was placed for, when one placed it. */
  campaign?: string;
}

export interface CallDeps {
  /** Dials one agent session (agent/dialer.ts's AgentDialer fits). */
  dial: DialAgent;
  metrics: Metrics;
  logger: Logger;
  events: CallEventHub;
  /** How the carrier wants audio sent (its adapter's `downlink(format)`). */
  downlink: DownlinkRules;
  /** Caller audio held while no agent is ready; past it the oldest is dropped and counted. */
  maxEarlyAudioBytes: number;
  /**
   * The queue the caller's first frames wait in since the stream's `start` (agent-queue.ts): the
   * agent link keeps it, so they wait in one queue only. Default: a new, empty one.
   */
  heldAudio?: AgentQueue;
  /** The profile's own recording in the stream's format, played when no agent can be reached. */
  fallbackAudio: Buffer | null;
  /**
   * The fixed prompts a caller hears without an agent (rendered, else bundled): the "unavailable"
   * message when the profile has no recording of its own, the goodbye of a drain with no agent.
   */
  prompts?: PromptPlayer;
  /** Outbound calls: the pre-recorded voicemails of `amd.voicemail.audioUrl`, fetched once. */
  voicemailRecordings?: VoicemailRecordingSource;
  /** Listeners on the call's audio from its first frame (audio-listener.ts); see `listen`. */
  audioListeners?: readonly CallAudioListener[];
  /** A recorded call: its consent prompt, pause and resume (recording-port.ts). */
  recording?: CallRecordingPort;
  onEnded(session: CallSession, record: CallRecord): void;
  /** Time and timers; the process clock unless a test gives its own. */
  clock?: Clock;
}

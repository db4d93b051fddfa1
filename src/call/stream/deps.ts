// What a media stream is given by the app: the config, the store, the agent dialer and the call's
// shared parts (registry, events, pre-warmed agents, pending streams, verdicts), and the hooks that
// reach beyond one instance (admission of a call prepared elsewhere, releasing its pre-warm there).
import type { Logger } from 'pino';
import type { AgentDialer } from '../../agent/dialer.js';
import type { Config } from '../../config/types.js';
import type { Metrics } from '../../metrics/metrics.js';
import type { CallRecord } from '../../store/call-record.js';
import type { Store } from '../../store/store.js';
import type { DialPolicy } from '../../trust/dial-policy.js';
import type { Admission } from '../carrier-port.js';
import type { PendingStreams } from '../intake/pending-streams.js';
import type { PrewarmedAgent, PrewarmPool } from '../intake/prewarm.js';
import type { MachineVerdicts } from '../outbound/machine-verdicts.js';
import type { VoicemailRecordingSource } from '../outbound/voicemail-recordings.js';
import type { RecordCall } from '../recording-port.js';
import type { PromptPlayer } from '../session/fallback-audio.js';
import type { CallEventHub } from '../watch/events.js';
import type { CallRegistry } from '../watch/registry.js';

/** A stream's call, as the instance that answered its webhook names it. */
export interface ForeignStream {
  /** The instance that prepared the call and may hold its pre-warmed agent. */
  instance: string;
  carrier: string;
  callSid: string;
}

export interface MediaSocketDeps {
  config: Config;
  store: Store;
  dial: AgentDialer;
  metrics: Metrics;
  logger: Logger;
  registry: CallRegistry;
  events: CallEventHub;
  prewarm: PrewarmPool<PrewarmedAgent>;
  /** Answering-machine verdicts that came before their call's stream. */
  verdicts?: MachineVerdicts;
  saveRecord(record: CallRecord): void;
  /** Whether a call not prepared here may be taken now (not draining, under the admitted concurrency). */
  admitCall(): Admission;
  /**
   * A stream arrived here for a call another instance prepared: this instance carries it with a
   * fresh dial, so the other's pre-warmed agent will never be claimed. The fleet tells that instance
   * to close it at once; without one it expires there after its TTL.
   */
  releaseRemotePrewarm(stream: ForeignStream): void;
  /** Calls prepared here awaiting their stream (a drain waits for them). */
  pending?: PendingStreams;
  /** The fixed prompts (rendered, else bundled) a caller hears without an agent. */
  prompts?: PromptPlayer;
  /** The pre-recorded voicemails of outbound calls (`amd.voicemail.audioUrl`). */
  voicemailRecordings?: VoicemailRecordingSource;
  /** Every transfer (operator, agent function, fallback) goes to a number it allows. */
  dialPolicy: DialPolicy;
  /** Starts the recording of a call whose profile (or call, or campaign) asks for one. */
  recordCall?: RecordCall;
}

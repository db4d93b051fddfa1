// The two parts of a session that watch the caller's side rather than carry audio: the silence
// monitor (silence.ts) and, for an outbound call with detection, the answering machine
// (answering-machine.ts). Built here from the call's profile and format, so the session only
// says what each does when it fires.
import { AnsweringMachine, type AnsweringMachineOptions } from '../outbound/answering-machine.js';
import type { Clock } from '../clock.js';
import type { CallDeps, CallInfo } from './call-info.js';
import { SilenceMonitor } from './silence.js';

export interface SilenceHandlers {
  /** Silence long enough to ask whether the caller is still there. */
  prompt(): void;
  /** Silence long enough to end the call. */
  hangup(): void;
  /** The caller stopped speaking, dated to the last voiced frame. */
  speechEnded(atMs: number): void;
}

export function callSilenceMonitor(info: CallInfo, clock: Clock, on: SilenceHandlers): SilenceMonitor {
  const { limits } = info.profile;
  return new SilenceMonitor({
    silencePromptMs: limits.silencePromptMs,
    silenceHangupMs: limits.silenceHangupMs,
    encoding: info.mediaFormat.encoding,
    sampleRate: info.mediaFormat.sampleRate,
    onPrompt: on.prompt,
    onHangup: on.hangup,
    // The monitor dates the end to the last voiced frame, not to when its detector was sure.
    onSpeechEnd: on.speechEnded,
    nowMs: () => clock.now(),
    setTimer: (callback, delayMs) => {
      const timer = clock.setTimeout(callback, delayMs);
      return () => clock.clearTimeout(timer);
    },
  });
}

/** What the answering machine works with that the session already holds. */
export type MachineParts = Pick<
  AnsweringMachineOptions,
  'clock' | 'answeredAtMs' | 'logger' | 'host' | 'hearing' | 'speech' | 'downlink'
>;

/** An outbound call with detection: its answering machine; null for every other call. */
export function callAnsweringMachine(
  info: CallInfo,
  deps: CallDeps,
  parts: MachineParts,
): AnsweringMachine | null {
  const outbound = info.outbound;
  if (outbound?.amd == null) return null;
  return new AnsweringMachine({
    ...parts,
    outbound: { ...outbound, amd: outbound.amd },
    carrier: info.carrier,
    format: info.mediaFormat,
    metrics: deps.metrics,
    ...(deps.prompts ? { prompts: deps.prompts } : {}),
    ...(deps.voicemailRecordings ? { voicemailRecordings: deps.voicemailRecordings } : {}),
  });
}

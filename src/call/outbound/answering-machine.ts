// An outbound call's answering machine (docs/protocols/answering-machine-detection.md): the gate
// that holds the agent back until the carrier's verdict (amd-gate.ts), the silence the agent hears
// in place of a greeting, the verdict that never comes, and the voicemail left after the beep. The
// session asks it about each caller frame and each step of the agent's output while it holds; it
// never writes to the agent itself: it says what the agent hears, and the session sends it.
import type { Logger } from 'pino';
import { type MediaFormat, silenceByte } from '../../audio/format.js';
import type { Metrics } from '../../metrics/metrics.js';
import type { VoicemailRecord } from '../../store/call-record.js';
import { AmdGate, type VerdictReport } from './amd-gate.js';
import type { Clock, ClockTimer } from '../clock.js';
import type { Downlink } from '../downlink/downlink.js';
import type { EndReason } from '../record/end-reason.js';
import type { Ending, Said } from '../session/endings.js';
import type { PromptPlayer } from '../session/fallback-audio.js';
import { GreetingEnd } from './greeting-end.js';
import type { OutboundContext } from './outbound-context.js';
import type { VoicemailRecordingSource } from './voicemail-recordings.js';

/**
 * With no verdict this long after the answer, the answerer is taken for a person (or, for a machine
 * whose greeting never seemed to end, the message starts). Past the carriers' own detection
 * timeouts (Twilio's default is 30 s).
 */
export const AMD_VERDICT_TIMEOUT_MS = 35_000;
/** How long the voicemail may take to be heard before the call hangs up anyway. */
export const VOICEMAIL_CAP_MS = 90_000;

export interface AnsweringMachineOptions {
  outbound: OutboundContext & { amd: NonNullable<OutboundContext['amd']> };
  carrier: string;
  format: MediaFormat;
  clock: Clock;
  /** When the call was answered, on `clock`. */
  answeredAtMs: number;
  metrics: Pick<Metrics, 'amdVerdicts' | 'amdDetection'>;
  logger: Logger;
  host: {
    begin(ending: Ending): boolean;
    end(reason: EndReason): void;
    readonly isEnding: boolean;
    /** Closes the agent session, so it cannot talk over a message played without it. */
    closeAgent(): void;
  };
  /** The caller's side as the silence monitor hears it. */
  hearing: { readonly callerSpeaking: boolean; readonly silenceMs: number };
  /** How a line or a recording is delivered (endings.ts). */
  speech: {
    say(text: string): Promise<Said>;
    play(audio: Buffer, capMs: number): Promise<'played' | 'timeout'>;
  };
  downlink: Pick<Downlink, 'lastWordsHeard'>;
  prompts?: PromptPlayer;
  voicemailRecordings?: VoicemailRecordingSource;
}

export class AnsweringMachine {
  readonly #opts: AnsweringMachineOptions;
  readonly #gate: AmdGate;
  /** Where the carrier reports no end of greeting, the audio tells it (greeting-end.ts). */
  readonly #greetingEnd = new GreetingEnd();
  #timer: ClockTimer | null;
  /** What the agent hears in place of the answerer's frames while they are muted. */
  #silenceFrame: Buffer | null = null;
  /** How the voicemail was left, or why none was. */
  #voicemail: VoicemailRecord | null = null;

  constructor(opts: AnsweringMachineOptions) {
    this.#opts = opts;
    this.#gate = new AmdGate(opts.outbound.amd);
    this.#timer = opts.clock.setTimeout(() => this.#timedOut(), AMD_VERDICT_TIMEOUT_MS);
  }

  get verdict(): VerdictReport | null {
    return this.#gate.verdict;
  }

  /** The answerer is a person (or taken for one): the agent speaks freely. */
  get personAnswered(): boolean {
    return this.#gate.state === 'open';
  }

  /**
   * A caller frame, and what the agent hears of it. Until a person is heard (and while a voicemail
   * is left) that is silence of the same size: a voicemail greeting must not start a conversation,
   * nor a recorder's beep interrupt the message. Otherwise the frame as it is.
   */
  screen(payload: Buffer): Buffer {
    const gate = this.#gate;
    if (!gate.mutesAnswerer) return payload;
    const silence = this.#silenceLike(payload);
    if (gate.holds) {
      const { hearing } = this.#opts;
      const fellSilent = this.#greetingEnd.observe(hearing.callerSpeaking, hearing.silenceMs);
      if (fellSilent && gate.awaitingMessageEnd) {
        this.verdictReported({
          verdict: 'machine',
          messageEnded: true,
          detectionMs: null,
          raw: 'greeting_silent',
        });
      }
    }
    return silence;
  }

  /**
   * The carrier's verdict. A person, or doubt, and the agent speaks at once; a machine, and the
   * voicemail plays after the beep, or the call hangs up.
   */
  verdictReported(report: VerdictReport): void {
    if (this.#opts.host.isEnding) return;
    const gate = this.#gate;
    // A machine's greeting end completes its first verdict; the verdict is counted once.
    const first = gate.verdict === null;
    const decision = gate.decide(report);
    if (decision.kind === 'none') return;
    if (decision.kind !== 'wait_for_message_end') this.#stopTimer();
    const { metrics, carrier, clock } = this.#opts;
    if (first) {
      metrics.amdVerdicts.inc({ carrier, verdict: report.verdict });
      metrics.amdDetection.observe(
        { carrier, verdict: report.verdict },
        (report.detectionMs ?? clock.now() - this.#opts.answeredAtMs) / 1000,
      );
    }
    this.#opts.logger.info(
      { amd: { verdict: report.verdict, raw: report.raw, decision: decision.kind } },
      'answering-machine verdict',
    );
    if (decision.kind === 'hang_up') this.#opts.host.end('machine');
    else if (decision.kind === 'leave_message') void this.#leaveMessage(decision.text, decision.audioUrl);
  }

  /**
   * Whether a step of the agent's output is kept from the caller now: held until the verdict, or
   * dropped while a message is being left until the reply that speaks it starts (`startsReply`).
   */
  withholds(step: () => void, bytes = 0, startsReply = false): boolean {
    const gate = this.#gate;
    if (!gate.holds) return false;
    if (gate.state === 'listening') {
      gate.hold(step, bytes);
      return true;
    }
    if (startsReply && gate.messageStarted()) return false;
    return true;
  }

  /** The agent's words wait with its audio until the verdict; once a message is left, they are the record's. */
  holdsText(step: () => void): boolean {
    if (this.#gate.state !== 'listening') return false;
    this.#gate.hold(step);
    return true;
  }

  /** How the voicemail was left, or why none was; null when none was asked for. */
  get voicemail(): VoicemailRecord | null {
    return this.#voicemail;
  }

  close(): void {
    this.#stopTimer();
    this.#gate.close();
  }

  /** Silence the size of a caller frame, made once and sent as often as needed (never written to). */
  #silenceLike(payload: Buffer): Buffer {
    if (this.#silenceFrame?.length !== payload.length) {
      this.#silenceFrame = Buffer.alloc(payload.length, silenceByte(this.#opts.format.encoding));
    }
    return this.#silenceFrame;
  }

  #timedOut(): void {
    this.#timer = null;
    if (this.#opts.host.isEnding) return;
    if (this.#gate.awaitingMessageEnd) {
      this.verdictReported({ verdict: 'machine', messageEnded: true, detectionMs: null, raw: 'timeout' });
      return;
    }
    const decision = this.#gate.timedOut();
    if (decision.kind === 'none') return;
    this.#opts.metrics.amdVerdicts.inc({ carrier: this.#opts.carrier, verdict: 'unknown' });
    this.#opts.logger.info('no answering-machine verdict in time: treated as a person');
  }

  #stopTimer(): void {
    if (this.#timer !== null) this.#opts.clock.clearTimeout(this.#timer);
    this.#timer = null;
  }

  /**
   * Leaves the voicemail after the beep, then hangs up once it was heard: the recording at the
   * campaign's audio URL; else its text as a rendered prompt (config/prompts.json); else the text
   * spoken by the agent. Nothing to leave (a recording that cannot be played and no text) hangs up
   * as `machine`, the reason in the record.
   */
  async #leaveMessage(text: string | null, audioUrl: string | null): Promise<void> {
    const { host, logger } = this.#opts;
    if (!host.begin({ kind: 'voicemail', reason: 'voicemail_left' })) return;
    let problem: string | null = null;
    if (audioUrl !== null) {
      const recording = await this.#recording(audioUrl);
      if ('audio' in recording) {
        await this.#playMessage(recording.audio, 'recording', null);
        return;
      }
      problem = recording.problem;
      logger.warn(
        { problem, fallback: text ? 'text' : 'hangup' },
        'the voicemail recording cannot be played',
      );
    }
    if (host.isEnding) return;
    if (text === null || text.trim() === '') {
      this.#voicemail = { left: null, problem: problem ?? 'the call has no voicemail text' };
      logger.warn(
        { problem: this.#voicemail.problem },
        'a machine answered but no voicemail can be left: hanging up',
      );
      host.end('machine');
      return;
    }
    const rendered = await this.#rendered(text);
    if (rendered) {
      await this.#playMessage(rendered, 'rendered', problem);
      return;
    }
    if (host.isEnding) return;
    if ((await this.#opts.speech.say(text)) === 'refused') {
      this.#voicemail = { left: null, problem: 'the agent refused to speak the voicemail' };
      logger.warn('the agent refused to speak the voicemail: hanging up');
      host.end('machine');
      return;
    }
    this.#voicemail = { left: 'agent', problem };
    await this.#opts.downlink.lastWordsHeard(VOICEMAIL_CAP_MS);
    host.end('voicemail_left');
  }

  async #recording(url: string): Promise<{ audio: Buffer } | { problem: string }> {
    const source = this.#opts.voicemailRecordings;
    if (!source) return { problem: 'this server plays no voicemail recordings' };
    return source(url, this.#opts.format);
  }

  /** The text as a rendered prompt, or null when prompts are not rendered (or the render failed). */
  async #rendered(text: string): Promise<Buffer | null> {
    try {
      return (await this.#opts.prompts?.('voicemail', this.#opts.format, { text })) ?? null;
    } catch (err) {
      this.#opts.logger.warn(
        { err: (err as Error).message },
        'could not render the voicemail: the agent speaks it',
      );
      return null;
    }
  }

  /** Plays the message itself (the agent has nothing more to say here), and hangs up once it was heard. */
  async #playMessage(audio: Buffer, left: 'recording' | 'rendered', problem: string | null): Promise<void> {
    const { host } = this.#opts;
    if (host.isEnding) return;
    this.#voicemail = { left, problem };
    // Closed now, the agent cannot talk over the message.
    host.closeAgent();
    const heard = await this.#opts.speech.play(audio, VOICEMAIL_CAP_MS);
    if (heard === 'timeout') this.#opts.logger.warn('the carrier never confirmed the voicemail was played');
    host.end('voicemail_left');
  }
}

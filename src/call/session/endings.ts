// The polite endings of a call: what happens between the decision to end it and its end. A
// goodbye the agent says (or the line's farewell), a transfer after the agent's last words or at an
// operator's request, the fallback when no agent can carry the call. Each is the data of the
// session's `finishing` state (an `Ending`), so no second one starts while one is under way; the
// voicemail of an answering machine is one too (answering-machine.ts plays it).
//
// Transfers take one path with one failure rule: a transfer that fails never ends the call, it is
// logged once and the call goes on as it would have without it. For an operator's or a function's
// transfer that is the agent (the session leaves `finishing` for the state it came from, and an
// agent that carries the call apologises); for the fallback it is the fallback message.
import type { Logger } from 'pino';
import type { AgentClientMessage } from '../../agent/protocol.js';
import type { MediaFormat } from '../../audio/format.js';
import type { Downlink } from '../downlink/downlink.js';
import type { EndReason } from '../record/end-reason.js';
import type { PromptPlayer } from './fallback-audio.js';
import type { CallLeg } from '../leg.js';

/** What the call does in its `finishing` state. */
export type Ending =
  | { kind: 'goodbye'; reason: EndReason }
  | { kind: 'transfer'; reason: 'transferred'; target: string; by: 'operator' | 'function' }
  | { kind: 'voicemail'; reason: 'voicemail_left' }
  | { kind: 'fallback'; reason: EndReason };

/** How long a goodbye may take to be spoken and heard before the call is ended anyway. */
export const FAREWELL_CAP_MS = 15_000;
/** After a function answer, how long the agent has to start speaking its last words. */
export const REPLY_START_GRACE_MS = 2_000;
/** Audio of the bridge's own: how long past its own length the bridge waits for it to be heard. */
export const PLAYED_SLACK_MS = 3_000;

export const TRANSFER_FAILED =
  "I'm sorry, I couldn't transfer you just now. Is there anything else I can help with?";

/** How the agent took a line it was asked to say. */
export type Said = 'started' | 'refused' | 'timeout';

/** What the endings need of the session that holds the state. */
export interface EndingsHost {
  /** Enters `finishing` with `ending`; false when a polite end is under way or the call is ending. */
  begin(ending: Ending): boolean;
  /** The one way a call ends. */
  end(reason: EndReason): void;
  readonly isEnding: boolean;
  /**
   * After a failed transfer: leaves `finishing` for the state the call came from. Returns whether
   * an agent carries the call now (it can be told the transfer failed).
   */
  resume(): boolean;
}

export interface EndingsOptions {
  host: EndingsHost;
  leg: Pick<CallLeg, 'canTransfer' | 'transfer'>;
  downlink: Pick<Downlink, 'state' | 'waitForReply' | 'lastWordsHeard' | 'play' | 'untilHeard' | 'pendingMs'>;
  agent: { send(message: AgentClientMessage): void; close(): void };
  format: MediaFormat;
  /** Where the call goes when no agent can carry it, when the profile names a number. */
  fallbackTransferTo: string | null;
  /** The profile's own recording, played when no agent can carry the call. */
  fallbackAudio: Buffer | null;
  prompts?: PromptPlayer;
  logger: Logger;
}

type TransferResult = { ok: true } | { ok: false; err: Error };

export class Endings {
  readonly #opts: EndingsOptions;
  /** Settles the wait for a line the agent was asked to say, when it refuses to say it. */
  #refused: (() => void) | null = null;

  constructor(opts: EndingsOptions) {
    this.#opts = opts;
  }

  /**
   * A goodbye: the agent says `farewell` when one carries the call (or finishes what it is saying),
   * the bridge waits until the carrier confirms it was played, then ends with `reason`. A drain
   * (`shutdown`) with no agent to say it plays the drain's own recording.
   */
  async goodbye(reason: EndReason, farewell: string | undefined, agentLive: boolean): Promise<void> {
    const { host, downlink, agent } = this.#opts;
    if (!host.begin({ kind: 'goodbye', reason })) return;
    let said: Said | 'not_asked' | 'no_agent' = agentLive ? 'not_asked' : 'no_agent';
    if (farewell && agentLive) said = await this.say(farewell);
    if (reason === 'shutdown' && (said === 'no_agent' || said === 'refused')) {
      // The agent has nothing more to do on this call; closed now, it cannot cut the goodbye short.
      agent.close();
      await this.#playPrompt('drain_goodbye');
    }
    await downlink.lastWordsHeard(FAREWELL_CAP_MS);
    host.end(reason);
  }

  /** `end_call`: the goodbye may still be coming or playing; the call ends once it was heard. */
  async endAfterReply(): Promise<void> {
    const { host } = this.#opts;
    if (!host.begin({ kind: 'goodbye', reason: 'end_call' })) return;
    await this.#lastReplyHeard();
    host.end('end_call');
  }

  /** `transfer_call`: the call moves to `target` once the agent's last words were heard. */
  async transferAfterReply(target: string): Promise<void> {
    const { host } = this.#opts;
    const ending: Ending = { kind: 'transfer', reason: 'transferred', target, by: 'function' };
    if (!host.begin(ending)) return;
    await this.#lastReplyHeard();
    if (host.isEnding) return;
    await this.#transfer(ending, target);
  }

  /**
   * An operator moves the call (admin API) at once. Throws when the carrier cannot transfer, a
   * polite end is already under way, or the carrier refused (the call goes on).
   */
  async transferNow(target: string): Promise<void> {
    const { host, leg } = this.#opts;
    if (!leg.canTransfer) throw new Error('this carrier has no call-control API configured');
    const ending: Ending = { kind: 'transfer', reason: 'transferred', target, by: 'operator' };
    if (!host.begin(ending)) throw new Error('the call is already ending');
    const result = await this.#transfer(ending, target);
    if (!result.ok) throw result.err;
  }

  /** No agent can carry the call: the fallback number when there is one, else the fallback message. */
  async fallback(reason: EndReason): Promise<void> {
    const { host, leg, fallbackTransferTo, fallbackAudio } = this.#opts;
    const ending: Ending = { kind: 'fallback', reason };
    if (!host.begin(ending)) return;
    if (fallbackTransferTo !== null && leg.canTransfer) {
      const result = await this.#transfer(ending, fallbackTransferTo);
      if (result.ok || host.isEnding) return;
    }
    if (fallbackAudio) await this.play(fallbackAudio);
    else await this.#playPrompt('unavailable');
    host.end(reason);
  }

  /**
   * Asks the agent to say `text` (docs/protocols/agent.md section 10: `queue`, so it neither cuts
   * its own reply short nor is refused while the caller speaks). An agent may still decline it with
   * `InjectionRefused`, which ends the wait at once.
   */
  async say(text: string): Promise<Said> {
    const refused = new Promise<'refused'>((resolve) => {
      this.#refused = () => resolve('refused');
    });
    this.#inject(text);
    const said = await Promise.race([
      this.#opts.downlink
        .waitForReply('started', REPLY_START_GRACE_MS * 2)
        .then((started): Said => (started ? 'started' : 'timeout')),
      refused,
    ]);
    this.#refused = null;
    return said;
  }

  /** The agent's `InjectionRefused`. */
  injectionRefused(): void {
    this.#refused?.();
  }

  /** Plays audio of the bridge's own and waits until it has been heard, at most `capMs`. */
  async play(audio: Buffer, capMs = Infinity): Promise<'played' | 'timeout'> {
    const { host, downlink } = this.#opts;
    if (host.isEnding) return 'timeout';
    downlink.play(audio);
    return downlink.untilHeard(Math.min(downlink.pendingMs() + PLAYED_SLACK_MS, capMs));
  }

  /**
   * The one transfer path. A transfer that fails goes on as the call would without it: the
   * fallback's message (the caller of `fallback` plays it), or the agent, told when it is there.
   */
  async #transfer(ending: Ending, target: string): Promise<TransferResult> {
    const { host, leg, logger } = this.#opts;
    try {
      await leg.transfer(target);
    } catch (err) {
      logger.error({ err: (err as Error).message, target, ending: ending.kind }, 'transfer failed');
      if (!host.isEnding && ending.kind !== 'fallback' && host.resume()) this.#inject(TRANSFER_FAILED);
      return { ok: false, err: err as Error };
    }
    logger.info({ target }, 'call transferred');
    host.end('transferred');
    return { ok: true };
  }

  /** After a function answer: the reply it asked for starts, is sent, and is heard (each bounded). */
  async #lastReplyHeard(): Promise<void> {
    const { downlink } = this.#opts;
    if (downlink.state !== 'replying') await downlink.waitForReply('started', REPLY_START_GRACE_MS);
    await downlink.lastWordsHeard(FAREWELL_CAP_MS);
  }

  /** Plays a fixed prompt (rendered, else bundled) and waits until it has been heard, bounded. */
  async #playPrompt(kind: 'unavailable' | 'drain_goodbye'): Promise<void> {
    let audio: Buffer | null = null;
    try {
      audio = (await this.#opts.prompts?.(kind, this.#opts.format)) ?? null;
    } catch (err) {
      this.#opts.logger.warn({ err: (err as Error).message, prompt: kind }, 'no audio for a prompt');
    }
    if (audio) await this.play(audio);
  }

  #inject(message: string): void {
    this.#opts.agent.send({ type: 'InjectAgentMessage', message, behavior: 'queue' });
  }
}

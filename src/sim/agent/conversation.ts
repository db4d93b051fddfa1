// The agent's side of one conversation: greeting, replies to the caller's turns (scripted by the
// scenario, then rotating through bundled phrases), client-side function calls and barge-in.
// Actions run one at a time, in the order they were asked for, as the real agent answers turns.
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from 'pino';
import type { AgentServerMessage, FunctionCallEntry, InjectBehavior } from '../../agent/protocol.js';
import { FALLBACK_REPLY_IDS, type PhraseBook } from './phrases.js';
import { Playback } from './playback.js';
import type { Scenario, ScenarioFunctionCall, ScenarioTurn } from './scenario.js';
import type { SessionSettings } from './settings.js';

/** What the conversation needs from its session: sending, and the two ways of ending it. */
export interface ConversationIO {
  send(msg: AgentServerMessage): void;
  sendAudio(chunk: Buffer): void;
  /** Sends a fatal `Error` and closes the socket. */
  fail(code: string, description: string): void;
  /** Closes the socket abruptly: no Error, no close frame. */
  drop(reason: string): void;
}

export interface ConversationOptions {
  phrases: PhraseBook;
  scenario: Scenario | undefined;
  realtime: boolean;
  functionCallTimeoutMs: number;
  /** Send a `LatencyReport` with each reply. */
  latencyReports?: boolean;
  logger: Logger;
}

/** Agent actions waiting behind the current one; more means the client floods us with injections. */
const MAX_QUEUED_ACTIONS = 16;

class FunctionCallTimeout extends Error {}

export class Conversation {
  readonly #io: ConversationIO;
  readonly #settings: SessionSettings;
  readonly #opts: ConversationOptions;
  readonly #log: Logger;
  readonly #abort = new AbortController();
  readonly #pendingCalls = new Map<string, (content: string) => void>();
  /** `queue` injections that arrived while the caller spoke: said after their turn. */
  #afterTurn: string[] = [];
  #queue: Promise<void> = Promise.resolve();
  #queued = 0;
  #turnIndex = 0;
  #fallbackIndex = 0;
  #callSeq = 0;
  #playback: Playback | undefined;
  #dropTimer: NodeJS.Timeout | undefined;

  constructor(io: ConversationIO, settings: SessionSettings, opts: ConversationOptions) {
    this.#io = io;
    this.#settings = settings;
    this.#opts = opts;
    this.#log = opts.logger;
  }

  /** True while reply audio is being sent. */
  get speaking(): boolean {
    return this.#playback !== undefined;
  }

  /** After SettingsApplied: speaks `agent.greeting`, in the scenario's words when it has a greeting. */
  greet(): void {
    const greeting = this.#settings.greeting;
    if (greeting === undefined) return;
    const ref = this.#opts.scenario?.greeting ?? greeting;
    this.#enqueue('greeting', () => this.#speak(ref, performance.now()));
  }

  /** Barge-in (docs/protocols/agent.md section 13): the rest of the current reply is never sent. */
  userStartedSpeaking(): void {
    if (!this.#playback) return;
    this.#log.debug({ bytesSent: this.#playback.bytesSent }, 'barge-in: reply audio stopped');
    this.#playback.cancel();
  }

  userTurnEnded(speechMs: number): void {
    const endedAt = performance.now();
    this.#enqueue('turn', () => this.#answerTurn({ speechMs }, endedAt));
    for (const message of this.#afterTurn.splice(0)) {
      this.#enqueue('injected agent message', () => this.#speak(message, performance.now()));
    }
  }

  injectUserMessage(content: string): void {
    const at = performance.now();
    this.#enqueue('injected user message', () => this.#answerTurn({ content }, at));
  }

  /**
   * `InjectAgentMessage` (docs/protocols/agent.md, `behavior`): `default` and `queue` are said after
   * what is already queued, `queue` after the caller's turn when they are speaking; `interrupt`
   * cuts the reply being spoken short first. (Refusing while the caller speaks is the session's.)
   */
  injectAgentMessage(message: string, behavior: InjectBehavior = 'default', callerSpeaking = false): void {
    if (behavior === 'queue' && callerSpeaking) {
      if (this.#afterTurn.length < MAX_QUEUED_ACTIONS) this.#afterTurn.push(message);
      return;
    }
    if (behavior === 'interrupt') this.#playback?.cancel();
    const at = performance.now();
    this.#enqueue('injected agent message', () => this.#speak(message, at));
  }

  /** Settles the pending function call with this id; false when none is pending under it. */
  functionCallResponse(id: string, content = ''): boolean {
    const settle = this.#pendingCalls.get(id);
    if (!settle) return false;
    settle(content);
    return true;
  }

  /** Ends every action: pending waits reject, the current reply stops, nothing more is sent. */
  stop(): void {
    if (this.#abort.signal.aborted) return;
    this.#abort.abort();
    this.#playback?.cancel();
    clearTimeout(this.#dropTimer);
  }

  #enqueue(what: string, action: () => Promise<void>): void {
    if (this.#abort.signal.aborted) return;
    if (this.#queued >= MAX_QUEUED_ACTIONS) {
      this.#io.send({ type: 'Warning', code: 'AGENT_BUSY', description: `${what} dropped: too many queued` });
      return;
    }
    this.#queued++;
    this.#queue = this.#queue
      .then(() => (this.#abort.signal.aborted ? undefined : action()))
      .catch((err: unknown) => {
        if (this.#abort.signal.aborted) return;
        this.#log.error({ err }, `${what} failed`);
        this.#io.fail('INTERNAL_SERVER_ERROR', `${what} failed`);
      })
      .finally(() => {
        this.#queued--;
      });
  }

  /** One caller turn, heard or injected, answered per its scenario turn (scenario.ts). */
  async #answerTurn(input: { speechMs?: number; content?: string }, endedAt: number): Promise<void> {
    const turn: ScenarioTurn | undefined = this.#opts.scenario?.turns[this.#turnIndex];
    this.#turnIndex++;
    const heard =
      input.content ?? turn?.user ?? `(caller spoke for ${((input.speechMs ?? 0) / 1000).toFixed(1)} s)`;
    this.#log.debug({ transcript: heard }, 'caller turn');
    this.#io.send({ type: 'ConversationText', role: 'user', content: heard });
    this.#history({ type: 'History', role: 'user', content: heard });

    if (turn?.error) {
      this.#io.fail(turn.error.code, turn.error.description);
      return;
    }
    if (turn?.drop && turn.dropAfterMs === undefined) {
      this.#io.drop('scenario drop');
      return;
    }
    this.#io.send({ type: 'AgentThinking', content: '' });
    if (turn?.delayMs) await sleep(turn.delayMs, undefined, { signal: this.#abort.signal });
    if (turn?.functionCalls?.length) await this.#callFunctions(turn.functionCalls);
    await this.#speak(turn?.reply ?? this.#nextFallbackReply(), endedAt, turn?.dropAfterMs);
  }

  /** ConversationText, AgentStartedSpeaking, audio in the output format, then AgentAudioDone. */
  async #speak(ref: string, startedAt: number, dropAfterMs?: number): Promise<void> {
    const thoughtAt = performance.now();
    const utterance = await this.#opts.phrases.resolve(ref);
    this.#io.send({ type: 'ConversationText', role: 'assistant', content: utterance.text });
    this.#history({ type: 'History', role: 'assistant', content: utterance.text });
    const audio = this.#opts.phrases.render(utterance, this.#settings.output);
    const readyAt = performance.now();
    const latency = {
      total_latency: seconds(readyAt - startedAt),
      tts_latency: seconds(readyAt - thoughtAt),
      ttt_latency: seconds(thoughtAt - startedAt),
    };
    this.#io.send({ type: 'AgentStartedSpeaking', ...latency });
    if (this.#opts.latencyReports) {
      // No speech recognizer here: its share is reported as 0, the rest as measured.
      this.#io.send({
        type: 'LatencyReport',
        stt_latency: 0,
        ttt_token_latency: latency.ttt_latency,
        ttt_text_latency: latency.ttt_latency,
        tts_latency: latency.tts_latency,
        total_latency: latency.total_latency,
      });
    }
    if (dropAfterMs !== undefined) {
      this.#dropTimer = setTimeout(() => this.#io.drop('scenario drop mid-reply'), dropAfterMs);
    }
    const playback = new Playback(audio, {
      format: this.#settings.output,
      realtime: this.#opts.realtime,
      send: (chunk) => this.#io.sendAudio(chunk),
    });
    this.#playback = playback;
    const end = await playback.play();
    this.#playback = undefined;
    // After a barge-in the reply was abandoned, not finished: no AgentAudioDone for it.
    if (end === 'completed' && !this.#abort.signal.aborted) this.#io.send({ type: 'AgentAudioDone' });
  }

  /**
   * Client-side functions (docs/protocols/agent.md section 7): one FunctionCallRequest, then wait for a
   * FunctionCallResponse per id. Functions Settings did not declare client-side are skipped.
   */
  async #callFunctions(calls: ScenarioFunctionCall[]): Promise<void> {
    const entries: FunctionCallEntry[] = [];
    for (const call of calls) {
      if (!this.#settings.clientFunctions.has(call.name)) {
        const declared = this.#settings.serverFunctions.has(call.name) ? 'with an endpoint' : 'not declared';
        this.#log.warn({ function: call.name }, `scenario function ${declared} in Settings: not called`);
        continue;
      }
      const args = typeof call.arguments === 'string' ? call.arguments : JSON.stringify(call.arguments ?? {});
      entries.push({ id: `fc_${++this.#callSeq}`, name: call.name, arguments: args, client_side: true });
    }
    if (entries.length === 0) return;
    this.#io.send({ type: 'FunctionCallRequest', functions: entries });
    let responses: Map<string, string>;
    try {
      responses = await this.#awaitResponses(entries.map((e) => e.id));
    } catch (err) {
      if (err instanceof FunctionCallTimeout) this.#io.fail('FUNCTION_CALL_TIMEOUT', err.message);
      throw err;
    }
    this.#history({
      type: 'History',
      function_calls: entries.map((entry) => ({ ...entry, response: responses.get(entry.id) ?? '' })),
    });
  }

  /** `History` events go out only when Settings set `flags.history` (docs/protocols/agent.md). */
  #history(message: Extract<AgentServerMessage, { type: 'History' }>): void {
    if (this.#settings.history) this.#io.send(message);
  }

  #awaitResponses(ids: string[]): Promise<Map<string, string>> {
    const signal = this.#abort.signal;
    const timeoutMs = this.#opts.functionCallTimeoutMs;
    return new Promise((resolve, reject) => {
      const waiting = new Set(ids);
      const responses = new Map<string, string>();
      const cleanup = () => {
        clearTimeout(timer);
        signal.removeEventListener('abort', onAbort);
        for (const id of ids) this.#pendingCalls.delete(id);
      };
      const onAbort = () => {
        cleanup();
        reject(signal.reason);
      };
      const timer = setTimeout(() => {
        cleanup();
        reject(
          new FunctionCallTimeout(
            `no FunctionCallResponse for ${[...waiting].join(', ')} in ${timeoutMs} ms`,
          ),
        );
      }, timeoutMs);
      signal.addEventListener('abort', onAbort, { once: true });
      for (const id of ids) {
        this.#pendingCalls.set(id, (content) => {
          waiting.delete(id);
          responses.set(id, content);
          this.#pendingCalls.delete(id);
          if (waiting.size === 0) {
            cleanup();
            resolve(responses);
          }
        });
      }
    });
  }

  #nextFallbackReply(): string {
    const ids = FALLBACK_REPLY_IDS.filter((id) => this.#opts.phrases.has(id));
    if (ids.length === 0) return 'Okay.';
    return ids[this.#fallbackIndex++ % ids.length]!;
  }
}

function seconds(ms: number): number {
  return Math.round(ms) / 1000;
}

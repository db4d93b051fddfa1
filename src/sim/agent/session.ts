// One agent socket, server side: the handshake order, client messages, caller audio, and the one
// path by which the session ends (docs/protocols/agent.md sections 3 and 4).
import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import { type RawData, WebSocket } from 'ws';
import type { AgentServerMessage } from '../../agent/protocol.js';
import { Conversation } from './conversation.js';
import type { PhraseBook } from './phrases.js';
import type { Scenario } from './scenario.js';
import { canTransition, SessionState, type SessionStateName } from './session-state.js';
import { checkListen, checkSettings, checkSpeak, checkThink, type SessionSettings } from './settings.js';
import { TurnDetector } from './turn-detector.js';

export interface SessionOptions {
  phrases: PhraseBook;
  scenario: Scenario | undefined;
  logger: Logger;
  realtime: boolean;
  endOfTurnSilenceMs: number;
  functionCallTimeoutMs: number;
  /** Send a `LatencyReport` after each reply. */
  latencyReports?: boolean;
}

/** WebSocket close codes: a client that broke the protocol, and a failure on our side. */
const CLOSE_POLICY = 1008;
const CLOSE_SERVER_ERROR = 1011;
const CLOSE_GOING_AWAY = 1001;

/** A client that stops reading lets audio pile up; past this the session is cut. */
const MAX_BUFFERED_BYTES = 8 * 1024 * 1024;

export interface EndHow {
  error?: { code: string; description: string };
  closeCode?: number;
  abrupt?: boolean;
}

export class AgentSession {
  readonly requestId = randomUUID();
  readonly #ws: WebSocket;
  readonly #opts: SessionOptions;
  readonly #log: Logger;
  #state: SessionStateName = SessionState.AwaitingSettings;
  #settings: SessionSettings | undefined;
  #turns: TurnDetector | undefined;
  #conversation: Conversation | undefined;
  #droppedEarlyAudioBytes = 0;

  constructor(ws: WebSocket, opts: SessionOptions) {
    this.#ws = ws;
    this.#opts = opts;
    this.#log = opts.logger.child({ requestId: this.requestId });
  }

  get state(): SessionStateName {
    return this.#state;
  }

  start(): void {
    this.#ws.on('message', (data, isBinary) => this.#onMessage(data, isBinary));
    this.#ws.on('close', () => this.end('client closed'));
    this.#ws.on('error', (err) => {
      this.#log.warn({ err }, 'agent socket error');
      this.end('socket error', { abrupt: true });
    });
    this.#send({ type: 'Welcome', request_id: this.requestId });
  }

  /** The one way a session ends; records why, stops the conversation, then closes the socket. */
  end(reason: string, how: EndHow = {}): void {
    if (!canTransition(this.#state, SessionState.Ended)) return;
    this.#state = SessionState.Ended;
    this.#conversation?.stop();
    this.#log.info({ reason, code: how.error?.code }, 'agent session ended');
    if (how.abrupt) {
      this.#ws.terminate();
      return;
    }
    if (how.error) this.#send({ type: 'Error', ...how.error });
    if (this.#ws.readyState === WebSocket.OPEN || this.#ws.readyState === WebSocket.CONNECTING) {
      this.#ws.close(how.closeCode ?? 1000);
    }
  }

  /** Server shutdown: a polite close frame. */
  shutdown(): void {
    this.end('server closing', { closeCode: CLOSE_GOING_AWAY });
  }

  #onMessage(data: RawData, isBinary: boolean): void {
    if (this.#state === SessionState.Ended) return;
    const bytes = toBuffer(data);
    if (isBinary) {
      this.#onAudio(bytes);
      return;
    }
    let msg: unknown;
    try {
      msg = JSON.parse(bytes.toString('utf8'));
    } catch {
      this.#failClient('UNPARSABLE_CLIENT_MESSAGE', 'a text frame was not valid JSON');
      return;
    }
    if (typeof msg !== 'object' || msg === null || typeof (msg as { type?: unknown }).type !== 'string') {
      this.#failClient('UNPARSABLE_CLIENT_MESSAGE', 'a client message must be a JSON object with a "type"');
      return;
    }
    const message = msg as Record<string, unknown> & { type: string };
    if (this.#state === SessionState.AwaitingSettings) this.#onFirstMessage(message);
    else this.#onLiveMessage(message);
  }

  /** Caller audio counts only once Settings are applied; before that it is dropped (docs/protocols/agent.md section 3). */
  #onAudio(bytes: Buffer): void {
    if (this.#state !== SessionState.Live || !this.#turns || !this.#conversation) {
      this.#droppedEarlyAudioBytes += bytes.length;
      this.#log.debug({ bytes: this.#droppedEarlyAudioBytes }, 'audio before SettingsApplied dropped');
      return;
    }
    for (const event of this.#turns.push(bytes)) {
      if (event.type === 'speech-started') {
        this.#send({ type: 'UserStartedSpeaking' });
        this.#conversation.userStartedSpeaking();
      } else {
        this.#conversation.userTurnEnded(event.speechMs);
      }
    }
  }

  /** The first client message must be Settings (docs/protocols/agent.md section 3). */
  #onFirstMessage(msg: Record<string, unknown> & { type: string }): void {
    if (msg.type !== 'Settings') {
      this.#failClient('UNPARSABLE_CLIENT_MESSAGE', `the first message must be Settings, got ${msg.type}`);
      return;
    }
    const checked = checkSettings(msg);
    if (!checked.ok) {
      this.#failClient('INVALID_SETTINGS', checked.description);
      return;
    }
    const settings = checked.value;
    this.#settings = settings;
    this.#turns = new TurnDetector(settings.input, { endOfTurnSilenceMs: this.#opts.endOfTurnSilenceMs });
    this.#conversation = new Conversation(
      {
        send: (m) => this.#send(m),
        sendAudio: (chunk) => this.#sendAudio(chunk),
        fail: (code, description) =>
          this.end('error', { error: { code, description }, closeCode: CLOSE_SERVER_ERROR }),
        drop: (reason) => this.end(reason, { abrupt: true }),
      },
      settings,
      {
        phrases: this.#opts.phrases,
        scenario: this.#opts.scenario,
        realtime: this.#opts.realtime,
        functionCallTimeoutMs: this.#opts.functionCallTimeoutMs,
        latencyReports: this.#opts.latencyReports === true,
        logger: this.#log,
      },
    );
    this.#state = SessionState.Live;
    this.#log.debug(
      { input: settings.input, output: settings.output, speak: settings.speak },
      'settings applied',
    );
    this.#send({ type: 'SettingsApplied' });
    this.#conversation.greet();
  }

  #onLiveMessage(msg: Record<string, unknown> & { type: string }): void {
    const conversation = this.#conversation!;
    const settings = this.#settings!;
    switch (msg.type) {
      case 'KeepAlive':
        break;
      case 'Settings':
        this.#warn('SETTINGS_ALREADY_APPLIED', 'Settings were already applied; this one is ignored');
        break;
      case 'UpdatePrompt':
        if (typeof msg.prompt !== 'string') {
          this.#warn('INVALID_CLIENT_MESSAGE', 'UpdatePrompt needs a string prompt');
          break;
        }
        settings.prompt = `${settings.prompt ?? ''}${msg.prompt}`;
        this.#send({ type: 'PromptUpdated' });
        break;
      case 'UpdateSpeak': {
        // Same rules as in Settings, but here a missing `speak` is an error, not the default voice.
        const speak = checkSpeak(msg.speak ?? {});
        if (!speak.ok) {
          this.#failClient('INVALID_SETTINGS', speak.description);
          break;
        }
        settings.speak = speak.value;
        this.#send({ type: 'SpeakUpdated' });
        break;
      }
      case 'UpdateThink': {
        const think =
          msg.think === undefined
            ? { ok: false as const, description: 'UpdateThink needs think' }
            : checkThink(msg.think);
        if (!think.ok) {
          this.#failClient('INVALID_SETTINGS', think.description);
          break;
        }
        settings.clientFunctions = think.value.client;
        settings.serverFunctions = think.value.server;
        if (think.value.prompt !== undefined) settings.prompt = think.value.prompt;
        this.#send({ type: 'ThinkUpdated' });
        break;
      }
      case 'UpdateListen': {
        const listen = checkListen(msg.listen);
        if (!listen.ok) {
          this.#failClient('INVALID_SETTINGS', listen.description);
          break;
        }
        this.#send({ type: 'ListenUpdated' });
        break;
      }
      case 'InjectAgentMessage': {
        const behavior = msg.behavior ?? 'default';
        if (typeof msg.message !== 'string' || msg.message.trim() === '') {
          this.#warn('INVALID_CLIENT_MESSAGE', 'InjectAgentMessage needs a non-empty message');
        } else if (behavior !== 'default' && behavior !== 'queue' && behavior !== 'interrupt') {
          this.#warn(
            'INVALID_CLIENT_MESSAGE',
            'InjectAgentMessage behavior must be default, queue or interrupt',
          );
        } else if (behavior !== 'queue' && this.#turns?.userSpeaking) {
          // The agent does not talk over the caller; `queue` waits its turn instead of being refused.
          this.#send({ type: 'InjectionRefused', message: 'the user is speaking' });
        } else {
          conversation.injectAgentMessage(msg.message, behavior, this.#turns?.userSpeaking === true);
        }
        break;
      }
      case 'InjectUserMessage':
        if (typeof msg.content !== 'string' || msg.content.trim() === '') {
          this.#warn('INVALID_CLIENT_MESSAGE', 'InjectUserMessage needs a non-empty content');
        } else {
          conversation.injectUserMessage(msg.content);
        }
        break;
      case 'FunctionCallResponse':
        if (
          typeof msg.id !== 'string' ||
          !conversation.functionCallResponse(msg.id, typeof msg.content === 'string' ? msg.content : '')
        ) {
          this.#warn('UNKNOWN_FUNCTION_CALL', `no function call is waiting under id ${String(msg.id)}`);
        }
        break;
      default:
        // Unknown types are tolerated (docs/protocols/agent.md section 11): warned about, never fatal.
        this.#warn('UNKNOWN_MESSAGE_TYPE', `unknown client message type ${msg.type}`);
    }
  }

  #failClient(code: string, description: string): void {
    this.end('client protocol error', { error: { code, description }, closeCode: CLOSE_POLICY });
  }

  #warn(code: string, description: string): void {
    this.#log.debug({ code }, description);
    this.#send({ type: 'Warning', code, description });
  }

  #send(msg: AgentServerMessage): void {
    if (this.#ws.readyState !== WebSocket.OPEN) return;
    this.#ws.send(JSON.stringify(msg));
  }

  #sendAudio(chunk: Buffer): void {
    if (this.#state !== SessionState.Live || this.#ws.readyState !== WebSocket.OPEN) return;
    if (this.#ws.bufferedAmount > MAX_BUFFERED_BYTES) {
      this.end('client not reading', { abrupt: true });
      return;
    }
    this.#ws.send(chunk, { binary: true });
  }
}

function toBuffer(data: RawData): Buffer {
  if (Buffer.isBuffer(data)) return data;
  if (Array.isArray(data)) return Buffer.concat(data);
  return Buffer.from(data);
}

// One voice agent conversation over an open socket: sends `Settings`, and once the agent answers
// `SettingsApplied` carries caller audio and control messages to it (docs/protocols/agent.md:
// anything earlier is ignored by the agent, so the call's agent link holds it until then). Agent
// audio and messages go to whoever is attached; until a call attaches (a pre-warmed session waits
// for its media stream), agent output is held, bounded, and replayed on attach.
import type { Logger } from 'pino';
import type WebSocket from 'ws';
import type { Metrics } from '../metrics/metrics.js';
import type { OpenAgentSocket } from './connect.js';
import { observeLatencyReport } from './latency-report.js';
import type { AgentClientMessage, AgentServerMessage, SettingsMessage } from './protocol.js';

export interface AgentCloseInfo {
  /** WebSocket close code (1006 when the connection dropped without one). */
  code: number;
  reason: string;
  /** The agent's fatal `Error` message, when that is what ended the session. */
  agentError?: { code: string; description: string };
}

export interface AgentHandlers {
  onReady(): void;
  onAudio(chunk: Buffer): void;
  onMessage(message: AgentServerMessage): void;
  onClose(info: AgentCloseInfo): void;
}

/** What a call may ask of one agent session. */
export interface AgentChannel {
  readonly isReady: boolean;
  readonly isClosed: boolean;
  /** `performance.now()` when dialing began. */
  readonly dialStartedAtMs: number;
  /** `performance.now()` at `SettingsApplied`; null before. */
  readonly settingsAppliedAtMs: number | null;
  attach(handlers: AgentHandlers): void;
  /** Caller audio. Only once ready: before that it is not sent (the caller holds it). */
  sendAudio(chunk: Buffer): void;
  /** A control message. Only once ready, like audio. */
  send(message: AgentClientMessage): void;
  close(code?: number, reason?: string): void;
}

export interface AgentSessionOptions {
  /** `performance.now()` when dialing began: connect duration runs from it to `SettingsApplied`. */
  dialStartedAtMs: number;
  /** Agent output held before a call attaches. */
  maxHeldOutputBytes: number;
  /** Outbound socket backlog past which caller audio is dropped rather than queued without bound. */
  maxBufferedBytes: number;
  metrics: Metrics;
  logger: Logger;
}

type Held =
  | { kind: 'ready' }
  | { kind: 'audio'; chunk: Buffer }
  | { kind: 'message'; message: AgentServerMessage }
  | { kind: 'close'; info: AgentCloseInfo };

/** Agent error codes become metric labels: the first few dozen distinct ones, then `other`. */
const seenCodes = new Set<string>();
const MAX_CODE_LABELS = 50;
function codeLabel(code: string): string {
  const label = code.slice(0, 64) || 'none';
  if (seenCodes.has(label)) return label;
  if (seenCodes.size >= MAX_CODE_LABELS) return 'other';
  seenCodes.add(label);
  return label;
}

const KNOWN_TYPES = new Set([
  'Welcome',
  'SettingsApplied',
  'ConversationText',
  'UserStartedSpeaking',
  'AgentThinking',
  'FunctionCallRequest',
  'AgentStartedSpeaking',
  'AgentAudioDone',
  'PromptUpdated',
  'SpeakUpdated',
  'InjectionRefused',
  'Error',
  'Warning',
  'History',
  'ThinkUpdated',
  'ListenUpdated',
  'LatencyReport',
  'FunctionCallResponse',
]);

/** The options of every audio send, made once: this runs on each caller frame. */
const BINARY = Object.freeze({ binary: true });

export class AgentSession implements AgentChannel {
  private ready = false;
  private closed = false;
  private handlers: AgentHandlers | null = null;
  private held: Held[] = [];
  private heldBytes = 0;
  private fatalError: AgentCloseInfo['agentError'];
  private killTimer: NodeJS.Timeout | null = null;
  settingsAppliedAtMs: number | null = null;
  readonly dialStartedAtMs: number;

  private readonly ws: WebSocket;

  constructor(
    socket: OpenAgentSocket,
    settings: SettingsMessage,
    private readonly opts: AgentSessionOptions,
  ) {
    const ws = socket.ws;
    this.ws = ws;
    this.dialStartedAtMs = opts.dialStartedAtMs;
    socket.handOver((data, isBinary) => this.onFrame(data, isBinary));
    ws.on('error', (err) => opts.logger.warn({ err: err.message }, 'agent socket error'));
    ws.on('close', (code: number, reason: Buffer) => this.onSocketClose(code, reason.toString('utf8')));
    ws.send(JSON.stringify(settings));
  }

  get isReady(): boolean {
    return this.ready;
  }

  get isClosed(): boolean {
    return this.closed;
  }

  /** Connects a call; anything the agent sent before is delivered now, in order. */
  attach(handlers: AgentHandlers): void {
    this.handlers = handlers;
    const held = this.held;
    this.held = [];
    this.heldBytes = 0;
    for (const item of held) this.deliver(item);
  }

  sendAudio(chunk: Buffer): void {
    if (this.closed || !this.ready) return;
    if (this.ws.bufferedAmount > this.opts.maxBufferedBytes) {
      this.opts.metrics.audioDropped.inc({ buffer: 'agent_socket' });
      return;
    }
    this.ws.send(chunk, BINARY);
  }

  send(message: AgentClientMessage): void {
    if (this.closed || !this.ready) return;
    this.ws.send(JSON.stringify(message));
  }

  /** Closes the socket; if the agent does not finish the closing handshake in a second, cuts it. */
  close(code = 1000, reason = 'call ended'): void {
    if (this.killTimer) return;
    this.ws.close(code, reason);
    this.killTimer = setTimeout(() => this.ws.terminate(), 1000);
    this.killTimer.unref();
  }

  private onFrame(data: Buffer, isBinary: boolean): void {
    if (isBinary) {
      this.emit({ kind: 'audio', chunk: data });
      return;
    }
    let message: AgentServerMessage;
    try {
      message = JSON.parse(data.toString('utf8')) as AgentServerMessage;
    } catch {
      this.opts.metrics.agentMessages.inc({ type: 'invalid' });
      this.opts.logger.debug('agent sent a text frame that is not JSON');
      return;
    }
    const type = typeof message?.type === 'string' ? message.type : '';
    if (!KNOWN_TYPES.has(type)) {
      // docs/protocols/agent.md: unknown types are tolerated, logged at debug and counted.
      this.opts.metrics.agentMessages.inc({ type: 'unknown' });
      this.opts.logger.debug({ type: type.slice(0, 64) }, 'agent sent an unknown message type');
      return;
    }
    this.opts.metrics.agentMessages.inc({ type });
    if (message.type === 'SettingsApplied') {
      this.onSettingsApplied();
      return;
    }
    if (message.type === 'Error') {
      // Fatal for the session: remember it so the close carries the agent's own reason.
      this.fatalError = { code: String(message.code ?? ''), description: String(message.description ?? '') };
      this.opts.metrics.agentErrors.inc({ kind: 'error', code: codeLabel(this.fatalError.code) });
    } else if (message.type === 'Warning') {
      this.opts.metrics.agentErrors.inc({ kind: 'warning', code: codeLabel(String(message.code ?? '')) });
    } else if (message.type === 'LatencyReport') {
      observeLatencyReport(this.opts.metrics, message as unknown as Record<string, unknown>);
    }
    this.emit({ kind: 'message', message });
  }

  private onSettingsApplied(): void {
    if (this.ready) return;
    this.ready = true;
    this.settingsAppliedAtMs = performance.now();
    this.opts.metrics.agentConnectDuration.observe(
      { outcome: 'ready' },
      (this.settingsAppliedAtMs - this.opts.dialStartedAtMs) / 1000,
    );
    this.emit({ kind: 'ready' });
  }

  private onSocketClose(code: number, reason: string): void {
    if (this.closed) return;
    this.closed = true;
    if (this.killTimer) clearTimeout(this.killTimer);
    const info: AgentCloseInfo = { code, reason };
    if (this.fatalError) info.agentError = this.fatalError;
    this.emit({ kind: 'close', info });
  }

  private emit(item: Held): void {
    if (this.handlers) {
      this.deliver(item);
      return;
    }
    if (item.kind === 'audio') {
      this.heldBytes += item.chunk.length;
      if (this.heldBytes > this.opts.maxHeldOutputBytes) {
        this.heldBytes -= item.chunk.length;
        this.opts.metrics.audioDropped.inc({ buffer: 'agent_held' });
        return;
      }
    }
    this.held.push(item);
  }

  private deliver(item: Held): void {
    const h = this.handlers!;
    switch (item.kind) {
      case 'ready':
        h.onReady();
        break;
      case 'audio':
        h.onAudio(item.chunk);
        break;
      case 'message':
        h.onMessage(item.message);
        break;
      case 'close':
        h.onClose(item.info);
        break;
    }
  }
}

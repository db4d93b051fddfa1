// Twilio's side of a bidirectional Media Stream (PROTOCOLS.md section 2): opens the WebSocket the
// TwiML named, sends `connected`, `start`, then a 160-byte μ-law frame every 20 ms (silence while the
// caller listens to the greeting, then caller audio, then silence while the caller holds the line,
// because phone audio never stops), plays what the server sends through the phone's speaker, and
// ends with `stop`, or when the server closes.
import WebSocket, { type RawData } from 'ws';
import { computeTwilioSignature } from '../../carriers/twilio/signature.js';
import { type CallEventLog, mulawMs } from './events.js';
import { type FrameClock, startFrameClock } from './frame-clock.js';
import { GreetingWait, type GreetingWaitLimits, type SpeakReason } from './greeting-wait.js';
import { FRAME_BYTES, PhonePlayout } from './playout.js';

const FRAME_MS = 20;
const MULAW_SILENCE = 0xff;
/** Server frames larger than this end the stream, as a bound on what one message may buffer. */
const MAX_SERVER_FRAME_BYTES = 4 * 1024 * 1024;
/** How long our closing handshake may take before the socket is dropped. */
const CLOSE_TIMEOUT_MS = 2000;

export interface MediaStreamOptions {
  url: string;
  authToken?: string;
  callSid: string;
  accountSid: string;
  streamSid: string;
  customParameters: Record<string, string>;
  /** Caller audio, μ-law 8 kHz mono. */
  audio: Buffer;
  realtime: boolean;
  /** Listen (sending silence) until the agent's greeting has played before speaking. */
  waitForGreeting: boolean;
  greetingWait?: Partial<GreetingWaitLimits>;
  holdMs: number;
  openTimeoutMs: number;
  log: CallEventLog;
  signal?: AbortSignal;
}

export interface MediaStreamOutcome {
  opened: boolean;
  heard: Buffer;
  endReason: string;
  /** The stream failed to open or the server closed it with an error code. */
  failed: boolean;
}

export async function runMediaStream(o: MediaStreamOptions): Promise<MediaStreamOutcome> {
  const ws = await openSocket(o).catch((err: Error) => err);
  if (ws instanceof Error) {
    return { opened: false, heard: Buffer.alloc(0), endReason: `stream-failed: ${ws.message}`, failed: true };
  }
  return new PhoneStream(ws, o).run();
}

function openSocket(o: MediaStreamOptions): Promise<WebSocket> {
  const headers: Record<string, string> = { 'user-agent': 'Twilio.TmeWs/1.0' };
  // The upgrade is signed over the wss:// URL with no parameters (PROTOCOLS.md section 2).
  if (o.authToken !== undefined)
    headers['x-twilio-signature'] = computeTwilioSignature(o.authToken, o.url, {});
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(o.url, {
      headers,
      handshakeTimeout: o.openTimeoutMs,
      maxPayload: MAX_SERVER_FRAME_BYTES,
      perMessageDeflate: false,
    });
    ws.once('open', () => {
      ws.removeAllListeners('error');
      resolve(ws);
    });
    ws.once('error', (err) => {
      ws.terminate();
      reject(err);
    });
  });
}

class PhoneStream {
  private sequence = 0;
  private chunk = 0;
  private clock: FrameClock | undefined;
  private readonly playout: PhonePlayout;
  private readonly callerFrames: Buffer[];
  private nextCallerFrame = 0;
  /** Undefined once the caller has started speaking. */
  private greetingWait: GreetingWait | undefined;
  /** Stream time of the frame now playing: what the greeting wait measures. */
  private nowMs = 0;
  private callerDone = false;
  private holdEndsAtFrame = 0;
  private hungUpBy: 'caller' | 'server' | undefined;
  private callerReason = 'caller-hangup';
  private closeTimer: NodeJS.Timeout | undefined;

  constructor(
    private readonly ws: WebSocket,
    private readonly o: MediaStreamOptions,
  ) {
    this.callerFrames = toFrames(o.audio);
    this.greetingWait = o.waitForGreeting ? new GreetingWait(o.greetingWait) : undefined;
    const log = o.log;
    this.playout = new PhonePlayout({
      onMark: (name, flushed) => {
        this.send({
          event: 'mark',
          sequenceNumber: this.nextSequence(),
          streamSid: o.streamSid,
          mark: { name },
        });
        log.emit({ type: 'mark-echoed', name, flushed });
      },
      onStarted: () => {
        this.greetingWait?.agentAudioStarted(this.nowMs);
        log.emit({ type: 'agent-audio-started' });
      },
      onStopped: (playedBytes) => {
        this.greetingWait?.agentAudioStopped(this.nowMs);
        log.emit({ type: 'agent-audio-stopped', playedMs: mulawMs(playedBytes) });
      },
    });
  }

  run(): Promise<MediaStreamOutcome> {
    const { ws, o } = this;
    const closed = new Promise<MediaStreamOutcome>((resolve) => {
      ws.on('close', (code, reasonBytes) => resolve(this.onClose(code, reasonBytes.toString('utf8'))));
    });
    ws.on('message', (data, isBinary) => this.onServerFrame(data, isBinary));
    ws.on('error', (err) => o.log.warnOnce(`media stream error: ${err.message}`));
    const onAbort = (): void => this.hangUp('interrupted');
    o.signal?.addEventListener('abort', onAbort, { once: true });

    o.log.markStreamStart();
    this.send({ event: 'connected', protocol: 'Call', version: '1.0.0' });
    this.send({
      event: 'start',
      sequenceNumber: this.nextSequence(),
      streamSid: o.streamSid,
      start: {
        accountSid: o.accountSid,
        streamSid: o.streamSid,
        callSid: o.callSid,
        tracks: ['inbound'],
        mediaFormat: { encoding: 'audio/x-mulaw', sampleRate: 8000, channels: 1 },
        customParameters: o.customParameters,
      },
    });
    o.log.emit({ type: 'stream-started', streamSid: o.streamSid, customParameters: o.customParameters });

    if (this.greetingWait === undefined) this.startSpeaking('no-wait', 0);
    if (o.signal?.aborted) this.hangUp('interrupted');
    else this.clock = startFrameClock(FRAME_MS, (index) => this.onFrame(index));
    return closed.finally(() => o.signal?.removeEventListener('abort', onAbort));
  }

  private onFrame(index: number): void {
    if (this.hungUpBy !== undefined) return;
    this.nowMs = index * FRAME_MS;
    this.playout.tick();
    if (this.greetingWait !== undefined) {
      const reason = this.greetingWait.decide(this.nowMs);
      if (reason === undefined) {
        this.sendMedia(SILENT_FRAME);
        return;
      }
      this.startSpeaking(reason, index);
    }
    const callerFrame = this.callerFrames[this.nextCallerFrame];
    if (callerFrame !== undefined) {
      this.nextCallerFrame += 1;
      this.sendMedia(callerFrame);
      return;
    }
    if (!this.callerDone) this.finishCallerAudio(index);
    if (index < this.holdEndsAtFrame) this.sendMedia(SILENT_FRAME);
    else this.hangUp('caller-hangup');
  }

  private startSpeaking(reason: SpeakReason, atFrame: number): void {
    this.greetingWait = undefined;
    this.o.log.emit({ type: 'caller-started-speaking', reason });
    if (this.o.realtime) return;
    // Unpaced: the caller's audio goes out at once; holding the line still takes real time.
    for (const frame of this.callerFrames) this.sendMedia(frame);
    this.nextCallerFrame = this.callerFrames.length;
    this.finishCallerAudio(atFrame);
  }

  private finishCallerAudio(atFrame: number): void {
    this.callerDone = true;
    this.holdEndsAtFrame = atFrame + Math.ceil(this.o.holdMs / FRAME_MS);
    this.o.log.emit({ type: 'caller-audio-done', sentMs: this.callerFrames.length * FRAME_MS });
  }

  private onServerFrame(data: RawData, isBinary: boolean): void {
    const { log, streamSid } = this.o;
    if (this.hungUpBy !== undefined) return;
    if (isBinary) {
      log.warnOnce('server sent a binary frame; Twilio reads only JSON text frames');
      return;
    }
    let message: Record<string, unknown>;
    try {
      message = JSON.parse(data.toString()) as Record<string, unknown>;
      if (typeof message !== 'object' || message === null) throw new TypeError('not an object');
    } catch {
      log.warnOnce('server sent a frame that is not a JSON object; ignored');
      return;
    }
    const event = message.event;
    if (event === 'media' || event === 'mark' || event === 'clear') {
      if (message.streamSid !== streamSid) {
        log.warnOnce(`server sent "${event}" without this stream's streamSid; Twilio ignores it`);
        return;
      }
    }
    switch (event) {
      case 'media':
        this.onServerMedia(message.media);
        break;
      case 'mark':
        this.onServerMark(message.mark);
        break;
      case 'clear':
        log.emit({ type: 'clear', droppedMs: mulawMs(this.playout.queuedAudioBytes) });
        this.playout.clear();
        break;
      default:
        log.warnOnce(`server sent unknown event ${JSON.stringify(event)}; ignored`);
    }
  }

  private onServerMark(mark: unknown): void {
    const name = (mark as { name?: unknown } | undefined)?.name;
    if (typeof name === 'string') this.playout.enqueueMark(name);
    else this.o.log.warnOnce('server sent a mark without mark.name; ignored');
  }

  private onServerMedia(media: unknown): void {
    const { log } = this.o;
    const payload = (media as { payload?: unknown } | undefined)?.payload;
    if (typeof payload !== 'string') {
      log.warnOnce('server sent media without media.payload; ignored');
      return;
    }
    const audio = Buffer.from(payload, 'base64');
    if (audio.toString('base64') !== payload)
      log.warnOnce('server sent media whose payload is not strict base64');
    this.playout.enqueueAudio(audio);
    if (this.playout.droppedOnOverflowBytes > 0) {
      log.warnOnce('server queued more audio than the phone buffers; the excess was dropped');
    }
  }

  /** The caller ends the call: `stop`, then a normal close. */
  private hangUp(reason: string): void {
    if (this.hungUpBy !== undefined) return;
    this.hungUpBy = 'caller';
    this.callerReason = reason;
    this.clock?.stop();
    this.playout.hangUp();
    this.send({
      event: 'stop',
      sequenceNumber: this.nextSequence(),
      streamSid: this.o.streamSid,
      stop: { accountSid: this.o.accountSid, callSid: this.o.callSid },
    });
    this.ws.close(1000);
    // A server that never answers the close handshake must not keep the call open.
    this.closeTimer = setTimeout(() => this.ws.terminate(), CLOSE_TIMEOUT_MS);
  }

  private onClose(code: number, reason: string): MediaStreamOutcome {
    clearTimeout(this.closeTimer);
    this.clock?.stop();
    const heard = (): Buffer => this.playout.heard();
    if (this.hungUpBy === 'caller') {
      return { opened: true, heard: heard(), endReason: this.callerReason, failed: false };
    }
    this.hungUpBy = 'server';
    const unplayedMs = mulawMs(this.playout.hangUp());
    this.o.log.emit({ type: 'hangup', code, reason, unplayedMs });
    // 1005: the close frame carried no code, which is a normal close too.
    const normal = code === 1000 || code === 1005;
    const endReason = normal
      ? 'server-hangup'
      : `server-error: close code ${code}${reason ? ` (${reason})` : ''}`;
    return { opened: true, heard: heard(), endReason, failed: !normal };
  }

  private sendMedia(payload: Buffer): void {
    this.chunk += 1;
    this.send({
      event: 'media',
      sequenceNumber: this.nextSequence(),
      streamSid: this.o.streamSid,
      media: {
        track: 'inbound',
        chunk: String(this.chunk),
        timestamp: String((this.chunk - 1) * FRAME_MS),
        payload: payload.toString('base64'),
      },
    });
  }

  private send(message: object): void {
    if (this.ws.readyState === WebSocket.OPEN) this.ws.send(JSON.stringify(message));
  }

  // Twilio numbers every message after `connected`, as decimal strings.
  private nextSequence(): string {
    this.sequence += 1;
    return String(this.sequence);
  }
}

const SILENT_FRAME = Buffer.alloc(FRAME_BYTES, MULAW_SILENCE);

/** 160-byte frames; the last one is padded with silence, since Twilio frames are always whole. */
function toFrames(audio: Buffer): Buffer[] {
  const frames: Buffer[] = [];
  for (let at = 0; at < audio.length; at += FRAME_BYTES) {
    const frame = audio.subarray(at, at + FRAME_BYTES);
    frames.push(frame.length === FRAME_BYTES ? frame : Buffer.concat([frame, SILENT_FRAME], FRAME_BYTES));
  }
  return frames;
}

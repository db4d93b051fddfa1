// The phone's side of a call's media stream, for any carrier: opens the WebSocket the answer named,
// sends the carrier's opening frames, then one 20 ms frame of caller audio every 20 ms (silence
// while the caller listens to the greeting, then caller audio, then silence while the caller holds
// the line, because phone audio never stops), plays what the server sends through the phone's
// speaker, echoes marks once their audio has played, and ends with the carrier's `stop`, or when
// the server closes. The carrier's framing is the dialect's (dialect.ts): the phone works in μ-law.
import WebSocket, { type RawData } from 'ws';
import type { WireFrame } from '../../call/carrier-port.js';
import type { SimServerEvent, SimStream } from './dialect.js';
import { fromPhone, toPhone } from './dialects/audio.js';
import { type CallEventLog, mulawMs } from './events.js';
import { type FrameClock, startFrameClock } from './frame-clock.js';
import { GreetingWait, type GreetingWaitLimits, type SpeakReason } from './greeting-wait.js';
import { CallTape } from './call-tape.js';
import { FRAME_BYTES, PhonePlayout } from './playout.js';

const FRAME_MS = 20;
const MULAW_SILENCE = 0xff;
/** Server frames larger than this end the stream, as a bound on what one message may buffer. */
const MAX_SERVER_FRAME_BYTES = 4 * 1024 * 1024;
/** How long our closing handshake may take before the socket is dropped. */
const CLOSE_TIMEOUT_MS = 2000;
/** How long the carrier's hang-up webhook may take once the stream has ended. */
const AFTER_HANGUP_TIMEOUT_MS = 5000;

export interface MediaStreamOptions {
  /** The carrier's stream, as the dialect frames it. */
  stream: SimStream;
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
  /** Both sides on the call's clock (μ-law 8 kHz, equal lengths): what `--out` writes. */
  sides: { caller: Buffer; agent: Buffer };
  endReason: string;
  /** The stream failed to open or the server closed it with an error code. */
  failed: boolean;
}

export async function runMediaStream(o: MediaStreamOptions): Promise<MediaStreamOutcome> {
  const ws = await openSocket(o).catch((err: Error) => err);
  if (ws instanceof Error) {
    return {
      opened: false,
      heard: Buffer.alloc(0),
      sides: { caller: Buffer.alloc(0), agent: Buffer.alloc(0) },
      endReason: `stream-failed: ${ws.message}`,
      failed: true,
    };
  }
  const outcome = await new PhoneStream(ws, o).run();
  await afterHangup(o);
  return outcome;
}

/** The carrier's own word that the call ended (a hang-up webhook), where it sends one. */
async function afterHangup(o: MediaStreamOptions): Promise<void> {
  if (!o.stream.afterHangup) return;
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new Error('no answer in time')), AFTER_HANGUP_TIMEOUT_MS);
  });
  try {
    await Promise.race([o.stream.afterHangup(), timeout]);
  } catch (err) {
    o.log.warnOnce(`the carrier's hang-up notice failed: ${(err as Error).message}`);
  } finally {
    clearTimeout(timer);
  }
}

function openSocket(o: MediaStreamOptions): Promise<WebSocket> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(o.stream.url, {
      headers: o.stream.headers,
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
  private clock: FrameClock | undefined;
  private readonly playout: PhonePlayout;
  private readonly tape = new CallTape();
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
        this.send(o.stream.markPlayed(name));
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
    for (const frame of o.stream.opening()) this.send(frame);
    o.log.emit({
      type: 'stream-started',
      streamSid: o.stream.streamSid,
      parameters: o.stream.parameters ?? {},
    });

    if (this.greetingWait === undefined) this.startSpeaking('no-wait', 0);
    if (o.signal?.aborted) this.hangUp('interrupted');
    else this.clock = startFrameClock(FRAME_MS, (index) => this.onFrame(index));
    return closed.finally(() => o.signal?.removeEventListener('abort', onAbort));
  }

  private onFrame(index: number): void {
    if (this.hungUpBy !== undefined) return;
    this.nowMs = index * FRAME_MS;
    const played = this.playout.tick();
    if (played) this.tape.agent(index, played);
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
    if (this.hungUpBy !== undefined) return;
    // The socket's binaryType is the default: every message arrives as one Buffer.
    for (const event of this.o.stream.serverFrame(data as Buffer, isBinary)) this.onServerEvent(event);
  }

  private onServerEvent(event: SimServerEvent): void {
    const { log, stream } = this.o;
    switch (event.type) {
      case 'audio':
        this.playout.enqueueAudio(toPhone(event.payload, stream.format));
        if (this.playout.droppedOnOverflowBytes > 0) {
          log.warnOnce('server queued more audio than the phone buffers; the excess was dropped');
        }
        break;
      case 'mark':
        this.playout.enqueueMark(event.name);
        break;
      case 'clear': {
        log.emit({ type: 'clear', droppedMs: mulawMs(this.playout.queuedAudioBytes) });
        this.playout.clear();
        const confirmation = stream.cleared();
        if (confirmation !== null) this.send(confirmation);
        break;
      }
      case 'warning':
        log.warnOnce(event.message);
        break;
    }
  }

  /** The caller ends the call: `stop`, then a normal close. */
  private hangUp(reason: string): void {
    if (this.hungUpBy !== undefined) return;
    this.hungUpBy = 'caller';
    this.callerReason = reason;
    this.clock?.stop();
    this.playout.hangUp();
    const stop = this.o.stream.stop();
    if (stop !== null) this.send(stop);
    this.ws.close(1000);
    // A server that never answers the close handshake must not keep the call open.
    this.closeTimer = setTimeout(() => this.ws.terminate(), CLOSE_TIMEOUT_MS);
  }

  private onClose(code: number, reason: string): MediaStreamOutcome {
    clearTimeout(this.closeTimer);
    this.clock?.stop();
    const heard = (): Buffer => this.playout.heard();
    const sides = this.tape.sides();
    if (this.hungUpBy === 'caller') {
      return { opened: true, heard: heard(), sides, endReason: this.callerReason, failed: false };
    }
    this.hungUpBy = 'server';
    const unplayedMs = mulawMs(this.playout.hangUp());
    this.o.log.emit({ type: 'hangup', code, reason, unplayedMs });
    // 1005: the close frame carried no code, which is a normal close too.
    const normal = code === 1000 || code === 1005;
    const endReason = normal
      ? 'server-hangup'
      : `server-error: close code ${code}${reason ? ` (${reason})` : ''}`;
    return { opened: true, heard: heard(), sides, endReason, failed: !normal };
  }

  private sendMedia(payload: Buffer): void {
    const { stream } = this.o;
    this.tape.caller(Math.round(this.nowMs / FRAME_MS), payload);
    for (const frame of stream.callerAudio(fromPhone(payload, stream.format))) this.send(frame);
  }

  private send(frame: WireFrame): void {
    if (this.ws.readyState === WebSocket.OPEN) this.ws.send(frame, { binary: typeof frame !== 'string' });
  }
}

const SILENT_FRAME = Buffer.alloc(FRAME_BYTES, MULAW_SILENCE);

/** 160-byte frames; the last one is padded with silence, since carriers send whole frames. */
function toFrames(audio: Buffer): Buffer[] {
  const frames: Buffer[] = [];
  for (let at = 0; at < audio.length; at += FRAME_BYTES) {
    const frame = audio.subarray(at, at + FRAME_BYTES);
    frames.push(frame.length === FRAME_BYTES ? frame : Buffer.concat([frame, SILENT_FRAME], FRAME_BYTES));
  }
  return frames;
}

// Listen-in (docs/console.md): the call's audio from the listen WebSocket, both sides, played with
// the Web Audio API. The socket sends a format message, then interleaved 16-bit little-endian PCM
// (left = the caller, right = what the caller heard), then `{"type":"end"}`.
import type { ListenMessage } from '../../../src/api/index.js';
import { url } from '../api.js';

export interface ListenProgress {
  state: 'connecting' | 'playing' | 'ended' | 'failed';
  bytes: number;
  chunks: number;
  message?: string;
}

interface Format {
  sampleRate: number;
  channels: number;
}

/** Audio is scheduled this far ahead, to ride over network jitter. */
const LEAD_S = 0.15;
/** Further ahead than this (a stalled tab caught up) the schedule restarts, so the delay stays small. */
const MAX_AHEAD_S = 1;
const REPORT_EVERY_MS = 250;

export class ListenPlayer {
  private socket: WebSocket;
  private context: AudioContext;
  private format: Format | null = null;
  private nextAt = 0;
  private progress: ListenProgress = { state: 'connecting', bytes: 0, chunks: 0 };
  private reportedAt = 0;

  /** Call from a click handler: browsers start audio only after a gesture. */
  constructor(
    callSid: string,
    private readonly onProgress: (progress: ListenProgress) => void,
  ) {
    this.context = new AudioContext();
    void this.context.resume();
    const scheme = location.protocol === 'https:' ? 'wss:' : 'ws:';
    this.socket = new WebSocket(
      `${scheme}//${location.host}${url('/v1/calls/{callSid}/listen', { params: { callSid } })}`,
    );
    this.socket.binaryType = 'arraybuffer';
    this.socket.onmessage = (event: MessageEvent<string | ArrayBuffer>) => this.receive(event.data);
    this.socket.onclose = (event) => {
      if (this.progress.state === 'ended' || this.progress.state === 'failed') return;
      const normal = event.code === 1000;
      this.update({
        state: normal ? 'ended' : 'failed',
        message: normal ? undefined : `the listen connection closed (${event.code})`,
      });
    };
  }

  stop(): void {
    this.socket.onclose = null;
    this.socket.close(1000);
    void this.context.close();
  }

  private receive(data: string | ArrayBuffer): void {
    if (typeof data === 'string') {
      // The socket's text messages are the contract's (src/api/events.ts).
      const message = JSON.parse(data) as ListenMessage;
      if (message.type === 'format') {
        this.format = { sampleRate: message.sampleRate, channels: message.channels };
        this.update({ state: 'playing' });
      } else if (message.type === 'end') {
        this.update({ state: 'ended' });
      }
      return;
    }
    this.update({ bytes: this.progress.bytes + data.byteLength, chunks: this.progress.chunks + 1 });
    if (this.format !== null) this.play(data, this.format);
  }

  private play(data: ArrayBuffer, format: Format): void {
    const view = new DataView(data);
    const frames = Math.floor(data.byteLength / 2 / format.channels);
    if (frames === 0) return;
    const buffer = this.context.createBuffer(format.channels, frames, format.sampleRate);
    for (let channel = 0; channel < format.channels; channel += 1) {
      const samples = buffer.getChannelData(channel);
      for (let i = 0; i < frames; i += 1) {
        samples[i] = view.getInt16((i * format.channels + channel) * 2, true) / 32768;
      }
    }
    const source = this.context.createBufferSource();
    source.buffer = buffer;
    source.connect(this.context.destination);
    const now = this.context.currentTime;
    if (this.nextAt < now + LEAD_S / 2 || this.nextAt > now + MAX_AHEAD_S) this.nextAt = now + LEAD_S;
    source.start(this.nextAt);
    this.nextAt += buffer.duration;
  }

  private update(change: Partial<ListenProgress>): void {
    const stateChanged = change.state !== undefined && change.state !== this.progress.state;
    this.progress = { ...this.progress, ...change };
    // Counters alone are reported a few times a second, not once per chunk.
    const now = performance.now();
    if (!stateChanged && now - this.reportedAt < REPORT_EVERY_MS) return;
    this.reportedAt = now;
    this.onProgress(this.progress);
  }
}

// How the simulated carrier plays one real carrier: its webhooks (signed as that carrier signs them
// when credentials are given), the answer it reads, and its media framing. The phone itself (caller
// audio in real time, a speaker that plays and echoes marks, clear, hang-up) is the same for every
// carrier. A dialect frames audio in the stream's own format and converts nothing: the phone turns
// it into what it hears and speaks, and the benchmark sends and checks it byte for byte.
import type { MediaFormat } from '../../audio/format.js';
import type { WireFrame } from '../../call/carrier-port.js';

export interface SimCallSpec {
  /** Base URL of the callbridge server, no trailing slash. */
  server: string;
  from: string;
  to: string;
  /** The environment: a dialect signs its requests when its carrier's credentials are in it. */
  env: Record<string, string | undefined>;
  timeoutMs: number;
  signal?: AbortSignal;
  /**
   * An outbound call the carrier placed for the server: the answer URL the server gave it (instead
   * of the carrier's fixed voice webhook), the call id it already has, and its direction.
   */
  outbound?: {
    answerUrl: string;
    callSid: string;
    /** The id the create request answered with, when the carrier names the call apart (Plivo). */
    requestId?: string;
    accountSid: string;
    /** The client state the call was created with, which the carrier returns (Telnyx). */
    clientState?: string | null;
    /** The value the call was created with, which the flow's applets receive (Exotel `CustomField`). */
    customField?: string | null;
  };
}

/** What the server sent on the media socket, as the phone acts on it. */
export type SimServerEvent =
  /** Agent audio in the stream's `format`, as the agent sent it (16-bit PCM little-endian). */
  | { type: 'audio'; payload: Buffer }
  /** A mark (checkpoint, notify) to echo once the audio queued before it has played. */
  | { type: 'mark'; name: string }
  | { type: 'clear' }
  /** Something the real carrier would reject or ignore; printed once. */
  | { type: 'warning'; message: string };

/** One call's media stream, as the carrier runs it. */
export interface SimStream {
  /** The socket to open and the upgrade headers the carrier sends (signature, Basic auth). */
  url: string;
  headers: Record<string, string>;
  /** The format on the wire. */
  format: MediaFormat;
  /** The carrier's ids for this call, as its frames name them. */
  callSid: string;
  streamSid: string;
  /** Per-call values the answer asked the carrier to pass back on the stream (parameters, headers), for the call's report. */
  parameters?: Record<string, string>;
  /** Frames the carrier sends once the socket is open (`connected`, `start`, …). */
  opening(): WireFrame[];
  /**
   * One 20 ms frame of caller audio in the stream's `format` (16-bit PCM little-endian) → the frames
   * the carrier sends for it (none while it batches).
   */
  callerAudio(payload: Buffer): WireFrame[];
  dtmf(digit: string): WireFrame;
  /** The server's frame → what the phone does with it. */
  serverFrame(data: Buffer, isBinary: boolean): SimServerEvent[];
  /** The echo of a mark once the audio before it has played (or was flushed by a clear). */
  markPlayed(name: string): WireFrame;
  /** The carrier's confirmation of a clear, where it sends one. */
  cleared(): WireFrame | null;
  /** The carrier's last frame when the caller hangs up, where it sends one before closing. */
  stop(): WireFrame | null;
  /** After the stream ends: the carrier's hang-up webhook, where it posts one. */
  afterHangup?(): Promise<void>;
}

export type SimAnswer =
  | { kind: 'stream'; stream: SimStream; observerToken?: string; warnings: string[] }
  /** The server declined the call (draining, at capacity): what the caller heard. */
  | { kind: 'declined'; reason: string; say?: string }
  | { kind: 'failed'; error: string };

export interface SimDialect {
  readonly name: string;
  /** Whether requests will be signed with `env`, for the one-line call summary. */
  describeSigning(env: Record<string, string | undefined>): string;
  /** Announces the call as the carrier does and reads the server's answer. */
  announce(call: SimCallSpec): Promise<SimAnswer>;
}

// The carrier-neutral surface of a media stream. Each carrier turns its wire frames into these
// events and serializes these commands back; the call session never learns which carrier it is.

export type AudioEncoding = 'mulaw' | 'alaw' | 'linear16';

export interface MediaFormat {
  encoding: AudioEncoding;
  sampleRate: number;
  channels: number;
}

export type CarrierEvent =
  | {
      type: 'start';
      callSid: string;
      streamSid: string;
      mediaFormat: MediaFormat;
      customParameters: Record<string, string>;
    }
  /** Raw caller audio in the stream's media format. */
  | { type: 'audio'; payload: Buffer }
  | { type: 'dtmf'; digit: string }
  /** A mark we sent earlier has been played (or flushed by a clear). */
  | { type: 'mark'; name: string }
  | { type: 'stop' }
  /** A well-formed frame that carries nothing for the call (e.g. Twilio `connected`). */
  | { type: 'ignored'; event: string };

/** A frame ready for `ws.send`: text for JSON protocols, binary for raw-audio ones. */
export type WireFrame = string | Buffer;

/** One media stream's codec: created per connection, it keeps what the protocol needs (stream id). */
export interface CarrierStream {
  /** Throws CarrierFrameError on a frame it cannot read. */
  parse(data: Buffer, isBinary: boolean): CarrierEvent;
  audio(payload: Buffer): WireFrame;
  clear(): WireFrame;
  mark(name: string): WireFrame;
}

/** A carrier's call-control API (REST), where credentials allow it. */
export interface CarrierControl {
  hangup(callSid: string): Promise<void>;
  /** Redirects the live call to dial `target` (E.164 or `sip:`); the media stream then ends. */
  transfer(callSid: string, target: string): Promise<void>;
}

/** What the call session may ask of the phone leg. */
export interface CarrierLeg {
  sendAudio(payload: Buffer): void;
  clear(): void;
  mark(name: string): void;
  /** Ends the phone call: asks the carrier's API where there is one, and closes the media stream. */
  hangup(): void;
  /** Closes the media stream only (after a transfer the call goes on without us). */
  closeStream(): void;
  /** Whether `transfer` can work on this call. */
  readonly canTransfer: boolean;
  transfer(target: string): Promise<void>;
}

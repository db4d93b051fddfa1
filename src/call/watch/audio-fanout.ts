// The call's audio handed to its listeners (audio-listener.ts): the caller's frames from the
// session, what the downlink played and truncated through its tap, each on the call's own clock.
// The tap is set only while someone listens, so a call nobody records or listens to does no
// listener work per frame (`listening` is a field read).
import type { Logger } from 'pino';
import type { CallAudioListener } from '../audio-listener.js';
import type { DownlinkTap } from '../downlink/downlink.js';

type Event = keyof CallAudioListener;

export class AudioFanout {
  /** Null while nobody listens, so the frame path walks no list. */
  #listeners: CallAudioListener[] | null = null;
  readonly #tap: DownlinkTap = {
    played: (audio, atMs) => this.#tell('played', audio, atMs),
    truncated: (atMs) => this.#tell('truncated', null, atMs),
  };

  /**
   * @param setTap puts the downlink's tap on (a tap) or off (null).
   * @param startedAtMs the call's start on its clock: listeners get times since then.
   */
  constructor(
    private readonly setTap: (tap: DownlinkTap | null) => void,
    private readonly startedAtMs: number,
    private readonly logger: Logger,
  ) {}

  get listening(): boolean {
    return this.#listeners !== null;
  }

  /** Adds a listener until the returned function removes it, or `close`. */
  add(listener: CallAudioListener): () => void {
    const before = this.#listeners;
    this.#listeners = before === null ? [listener] : [...before, listener];
    if (before === null) this.setTap(this.#tap);
    return () => this.#remove(listener);
  }

  /** A caller frame at `clockMs` on the call's clock; called only while `listening`. */
  callerFrame(payload: Buffer, clockMs: number): void {
    this.#tell('callerFrame', payload, clockMs);
  }

  /** The call ended: nobody hears more of it. */
  close(): void {
    this.#listeners = null;
    this.setTap(null);
  }

  /** Tells every listener (no closure per frame); one that throws is removed, never the call's problem. */
  #tell(event: Event, audio: Buffer | null, clockMs: number): void {
    const listeners = this.#listeners;
    if (listeners === null) return;
    const atMs = clockMs - this.startedAtMs;
    for (const listener of listeners) {
      try {
        if (event === 'truncated') listener.truncated(atMs);
        else listener[event](audio!, atMs);
      } catch (err) {
        this.logger.error({ err: (err as Error).message }, 'an audio listener failed: removed');
        this.#remove(listener);
      }
    }
  }

  #remove(listener: CallAudioListener): void {
    const rest = this.#listeners?.filter((l) => l !== listener) ?? [];
    this.#listeners = rest.length === 0 ? null : rest;
    if (this.#listeners === null) this.setTap(null);
  }
}

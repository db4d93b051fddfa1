// The phone side of a call as the session sees it (leg.ts): the media socket written through the
// carrier's codec, with back-pressure, and the carrier's call-control API for the hang-up and the
// transfer. Caller-bound audio goes from the downlink to `sendAudio`, through the codec, onto the
// socket: methods of this one object, no closure between them.
import type { Logger } from 'pino';
import WebSocket from 'ws';
import type { Metrics } from '../../metrics/metrics.js';
import type { DialPolicy } from '../../trust/dial-policy.js';
import type { CarrierControl, LegCodec, WireFrame } from '../carrier-port.js';
import type { CallLeg } from '../leg.js';

/** WebSocket close codes used on media streams (RFC 6455 section 7.4.1). */
export const CLOSE = Object.freeze({
  normal: 1000,
  unsupportedData: 1003,
  policyViolation: 1008,
  tooBig: 1009,
  serverError: 1011,
  tryAgainLater: 1013,
});

/** Past this many bytes queued toward the carrier, the phone side is not reading: drop, count. */
export const MAX_CARRIER_BACKLOG_BYTES = 1024 * 1024;

export interface CarrierLegOptions {
  socket: WebSocket;
  codec: LegCodec;
  control: CarrierControl | null;
  /** Every transfer goes to a number it allows. */
  dialPolicy: DialPolicy;
  metrics: Pick<Metrics, 'audioDropped'>;
  logger: Logger;
}

export class CarrierLeg implements CallLeg {
  readonly #socket: WebSocket;
  readonly #codec: LegCodec;
  readonly #control: CarrierControl | null;
  readonly #opts: CarrierLegOptions;
  /** The carrier's id of the call, once its stream's `start` named it. */
  #callSid = '';
  #logger: Logger;

  constructor(opts: CarrierLegOptions) {
    this.#opts = opts;
    this.#socket = opts.socket;
    this.#codec = opts.codec;
    this.#control = opts.control;
    this.#logger = opts.logger;
  }

  get canTransfer(): boolean {
    return this.#control !== null;
  }

  /** The stream's `start` named the call: hang-ups and transfers act on it from now on. */
  identify(callSid: string, logger: Logger): void {
    this.#callSid = callSid;
    this.#logger = logger;
  }

  /** Whether the socket still takes frames. */
  get open(): boolean {
    return this.#socket.readyState === WebSocket.OPEN;
  }

  /** Caller-bound audio, already cut to the carrier's rules. Runs on every frame the caller hears. */
  sendAudio(payload: Buffer): void {
    this.#send(this.#codec.audio(payload));
  }

  clear(): void {
    this.#send(this.#codec.clear());
  }

  mark(name: string): void {
    this.#send(this.#codec.mark(name));
  }

  hangup(): void {
    const control = this.#control;
    if (!control) {
      // With no call-control API, closing the media stream is how the call ends.
      this.closeStream();
      return;
    }
    control
      .hangup(this.#callSid)
      .catch((err: Error) => this.#logger.warn({ err: err.message }, 'carrier hang-up request failed'))
      .finally(() => this.closeStream());
  }

  closeStream(): void {
    this.#socket.close(CLOSE.normal, 'call ended');
  }

  async transfer(target: string): Promise<void> {
    const control = this.#control;
    if (!control) throw new Error('this carrier has no call-control API configured');
    this.#opts.dialPolicy.assert(target, 'transfer');
    await control.transfer(this.#callSid, target);
  }

  /** A frame to the carrier, unless the socket is gone or the carrier stopped reading. */
  #send(frame: WireFrame): void {
    const socket = this.#socket;
    if (socket.readyState !== WebSocket.OPEN) return;
    if (socket.bufferedAmount > MAX_CARRIER_BACKLOG_BYTES) {
      this.#opts.metrics.audioDropped.inc({ buffer: 'carrier_socket' });
      return;
    }
    socket.send(frame);
  }
}

// The Vonage Voice API calls callbridge makes (docs/protocols/vonage.md, REST): JSON with an
// application JWT, each bounded by a timeout. Hang-up and transfer update the live call; outbound
// calls are created with their answer and event URLs and read back by uuid.
import { CarrierApiError, retryableStatus } from '../../errors.js';
import { carrierRequest, jsonExchange } from '../carrier-request.js';
import { boundedStatusWord, type CarrierCallState, type CarrierCallStatus } from '../call-status.js';
import type { AppTokenSource } from './app-token.js';
import { transferNcco } from './ncco.js';

const CARRIER = 'vonage';

export interface VonageRestOptions {
  /** Base URL, `https://api.nexmo.com` in production. */
  apiUrl: string;
  token: AppTokenSource;
  timeoutMs: number;
}

export interface VonageMachineDetection {
  /** `continue` reports the verdict as an event; `hangup` ends the call on a machine. */
  behavior: 'continue' | 'hangup';
  /** `detect_beep` also reports when the voicemail greeting ends. */
  mode: 'default' | 'detect' | 'detect_beep';
  beepTimeoutS?: number;
}

export interface VonageOriginateRequest {
  /** E.164 numbers. */
  to: string;
  from: string;
  answerUrl: string;
  eventUrl: string;
  /** Answering-machine detection, when asked for (docs/protocols/answering-machine-detection.md). */
  machineDetection?: VonageMachineDetection;
  /** How long it rings before Vonage gives up. */
  ringingTimerS?: number;
}

export interface VonageRest {
  /** Ends the call; a call that already ended is not an error. */
  hangup(uuid: string): Promise<void>;
  /** Moves the caller to `target` (E.164 or `sip:`); this ends our media stream. */
  transfer(uuid: string, target: string): Promise<void>;
  originate(req: VonageOriginateRequest): Promise<CarrierCallState>;
  status(uuid: string): Promise<CarrierCallState>;
}

const E164 = /^\+[1-9]\d{1,14}$/;

// Vonage's words for a call's state, in the words the dialer reads.
const STATUSES: Readonly<Record<string, CarrierCallStatus>> = Object.freeze({
  started: 'queued',
  ringing: 'ringing',
  answered: 'in-progress',
  machine: 'in-progress',
  completed: 'completed',
  busy: 'busy',
  cancelled: 'canceled',
  failed: 'failed',
  rejected: 'failed',
  timeout: 'no-answer',
  unanswered: 'no-answer',
});

/** Vonage numbers are E.164 digits without the plus. */
function vonageNumber(e164: string, field: string): string {
  if (!E164.test(e164)) throw new Error(`vonage: ${field} must be an E.164 number`);
  return e164.slice(1);
}

// Only the error type's last segment goes into messages: the detail can quote numbers from the request.
function vonageErrorType(body: unknown): string | undefined {
  if (typeof body !== 'object' || body === null) return undefined;
  const type = (body as { type?: unknown }).type;
  if (typeof type !== 'string') return undefined;
  // `https://developer.nexmo.com/api-errors/voice#not-found` → `not-found`.
  const name = type.slice(Math.max(type.lastIndexOf('#'), type.lastIndexOf('/')) + 1);
  return /^[A-Za-z0-9_.-]{1,64}$/.test(name) ? name : undefined;
}

function callState(body: unknown, operation: string): CarrierCallState {
  const call = (typeof body === 'object' && body !== null ? body : {}) as {
    uuid?: unknown;
    status?: unknown;
  };
  if (typeof call.uuid !== 'string' || call.uuid === '' || call.uuid.length > 64) {
    // The call may exist already, so a retry could place a second one.
    throw new CarrierApiError(CARRIER, `vonage ${operation}: response lacks the call's uuid`, {
      retryable: false,
    });
  }
  const carrierStatus = boundedStatusWord(call.status);
  const status = Object.hasOwn(STATUSES, carrierStatus) ? STATUSES[carrierStatus]! : 'unknown';
  return { callSid: call.uuid, status, carrierStatus };
}

export function createVonageRest(options: VonageRestOptions): VonageRest {
  const callsUrl = `${options.apiUrl.replace(/\/+$/, '')}/v1/calls`;
  const callUrl = (uuid: string) => `${callsUrl}/${encodeURIComponent(uuid)}`;

  async function request(
    operation: string,
    method: 'GET' | 'POST' | 'PUT',
    url: string,
    body?: unknown,
  ): Promise<{ status: number; body: unknown }> {
    let authorization: string;
    try {
      authorization = `Bearer ${await options.token()}`;
    } catch (err) {
      throw new CarrierApiError(CARRIER, `vonage ${operation}: could not sign the application token`, {
        retryable: false,
        cause: err,
      });
    }
    return carrierRequest({
      carrier: CARRIER,
      operation,
      method,
      url,
      ...jsonExchange(authorization, body),
      timeoutMs: options.timeoutMs,
    });
  }

  function failure(operation: string, status: number, body: unknown): CarrierApiError {
    const carrierCode = vonageErrorType(body);
    const detail = carrierCode === undefined ? '' : ` (${carrierCode})`;
    return new CarrierApiError(CARRIER, `vonage ${operation}: HTTP ${status}${detail}`, {
      retryable: retryableStatus(status),
      status,
      carrierCode,
    });
  }

  return {
    async hangup(uuid: string): Promise<void> {
      const operation = 'hang up call';
      const res = await request(operation, 'PUT', callUrl(uuid), { action: 'hangup' });
      // 404: Vonage no longer has the call live, which is what a hang-up wants.
      if (res.status === 404) return;
      if (res.status < 200 || res.status > 299) throw failure(operation, res.status, res.body);
    },

    async transfer(uuid: string, target: string): Promise<void> {
      const operation = 'transfer call';
      const destination = { type: 'ncco', ncco: transferNcco(target) };
      const res = await request(operation, 'PUT', callUrl(uuid), { action: 'transfer', destination });
      if (res.status < 200 || res.status > 299) throw failure(operation, res.status, res.body);
    },

    async originate(req: VonageOriginateRequest): Promise<CarrierCallState> {
      const operation = 'create call';
      const body: Record<string, unknown> = {
        to: [{ type: 'phone', number: vonageNumber(req.to, 'to') }],
        from: { type: 'phone', number: vonageNumber(req.from, 'from') },
        answer_url: [req.answerUrl],
        answer_method: 'GET',
        event_url: [req.eventUrl],
        event_method: 'POST',
      };
      if (req.ringingTimerS !== undefined) body.ringing_timer = req.ringingTimerS;
      if (req.machineDetection !== undefined) {
        const { behavior, mode, beepTimeoutS } = req.machineDetection;
        body.advanced_machine_detection = {
          behavior,
          mode,
          ...(beepTimeoutS === undefined ? {} : { beep_timeout: beepTimeoutS }),
        };
      }
      const res = await request(operation, 'POST', callsUrl, body);
      if (res.status < 200 || res.status > 299) throw failure(operation, res.status, res.body);
      return callState(res.body, operation);
    },

    async status(uuid: string): Promise<CarrierCallState> {
      const operation = 'read call';
      const res = await request(operation, 'GET', callUrl(uuid));
      if (res.status < 200 || res.status > 299) throw failure(operation, res.status, res.body);
      return callState(res.body, operation);
    },
  };
}

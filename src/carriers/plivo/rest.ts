// The Plivo REST requests callbridge makes (docs/protocols/plivo.md sections 8 and 9): JSON with HTTP Basic
// `AUTH_ID:AUTH_TOKEN`, each bounded by a timeout. A call that has already ended is not an error
// when the point was to end it.
import { CarrierApiError, retryableStatus } from '../../errors.js';
import { boundedStatusWord, type CarrierCallState, type CarrierCallStatus } from '../call-status.js';
import { carrierRequest, jsonExchange } from '../carrier-request.js';
import { isDialTarget } from './xml.js';

export interface PlivoRestOptions {
  /** Base URL, `https://api.plivo.com` in production. */
  apiUrl: string;
  authId: string;
  authToken: string;
  /** Where Plivo reaches this server (a transfer points the call at our transfer route), read when needed. */
  publicUrl: () => string;
  timeoutMs: number;
}

export interface PlivoOriginateRequest {
  to: string;
  from: string;
  /**
   * Where Plivo asks what to do once answered: `…/carriers/plivo/answer`, with `?context=…` to carry
   * the call's outbound context to `CallIntake.prepare()`.
   */
  answerUrl: string;
  hangupUrl: string;
  ringTimeoutSec?: number;
  /** Answering-machine detection (docs/protocols/answering-machine-detection.md section 5). */
  machineDetection?: 'true' | 'hangup';
  machineDetectionTimeMs?: number;
  machineDetectionUrl?: string;
}

export interface PlivoOriginated {
  /** Plivo's id of the request; the call's own CallUUID arrives with the answer webhook. */
  requestUuid: string;
}

export interface PlivoRest {
  /** Hangs up a call by its CallUUID; resolves false when Plivo knows no such call (it has ended). */
  hangup(callSid: string): Promise<boolean>;
  transfer(callSid: string, target: string): Promise<void>;
  originate(request: PlivoOriginateRequest): Promise<PlivoOriginated>;
  /**
   * A live call's `call_status`, else the ended call's `call_state`, in the common status words; null
   * when Plivo knows no call by this CallUUID.
   */
  status(callSid: string): Promise<CarrierCallState | null>;
  /** A queued request's `call_status`, by its request UUID; null once it is no longer queued. */
  queuedStatus(requestUuid: string): Promise<CarrierCallState | null>;
  /** Cancels a request whose call is not answered yet; resolves false when Plivo has no such request. */
  cancelRequest(requestUuid: string): Promise<boolean>;
}

export const PLIVO_TRANSFER_PATH = '/carriers/plivo/transfer';

const LIVE_STATUSES: Readonly<Record<string, CarrierCallStatus>> = Object.freeze({
  queued: 'queued',
  ringing: 'ringing',
  'early-media': 'ringing',
  'in-progress': 'in-progress',
});

// The `call_state` of an ended call's record.
const ENDED_STATES: Readonly<Record<string, CarrierCallStatus>> = Object.freeze({
  ANSWER: 'completed',
  BUSY: 'busy',
  NO_ANSWER: 'no-answer',
  TIMEOUT: 'no-answer',
  CANCEL: 'canceled',
  FAILED: 'failed',
  ERROR: 'failed',
});

function lookup(table: Readonly<Record<string, CarrierCallStatus>>, word: string): CarrierCallStatus {
  return Object.hasOwn(table, word) ? table[word]! : 'unknown';
}

export function createPlivoRest(options: PlivoRestOptions): PlivoRest {
  const accountUrl = `${options.apiUrl.replace(/\/+$/, '')}/v1/Account/${encodeURIComponent(options.authId)}`;
  const callsUrl = `${accountUrl}/Call/`;
  const requestUrl = (requestUuid: string) => `${accountUrl}/Request/${encodeURIComponent(requestUuid)}/`;
  // Built once; the token lives only in this header, never in a message or URL.
  const authorization = `Basic ${Buffer.from(`${options.authId}:${options.authToken}`).toString('base64')}`;
  const callUrl = (callSid: string) => `${callsUrl}${encodeURIComponent(callSid)}/`;

  async function call(
    operation: string,
    method: 'GET' | 'POST' | 'DELETE',
    url: string,
    body?: Record<string, unknown>,
    opts: { notFoundIsDone?: boolean } = {},
  ): Promise<{ status: number; body: unknown }> {
    const response = await carrierRequest({
      carrier: 'plivo',
      operation,
      method,
      url,
      ...jsonExchange(authorization, body),
      timeoutMs: options.timeoutMs,
    });
    if (response.status >= 200 && response.status < 300) return response;
    if (opts.notFoundIsDone && response.status === 404) return response;
    // Plivo's error text can quote numbers from the request: only the status goes into messages.
    throw new CarrierApiError('plivo', `plivo ${operation}: HTTP ${response.status}`, {
      retryable: retryableStatus(response.status),
      status: response.status,
    });
  }

  return {
    async hangup(callSid) {
      // 404: Plivo no longer knows the call as live, so it has ended.
      const answer = await call('hang up call', 'DELETE', callUrl(callSid), undefined, {
        notFoundIsDone: true,
      });
      return answer.status !== 404;
    },

    async cancelRequest(requestUuid) {
      const answer = await call('cancel call request', 'DELETE', requestUrl(requestUuid), undefined, {
        notFoundIsDone: true,
      });
      return answer.status !== 404;
    },

    async queuedStatus(requestUuid) {
      const queued = await call(
        'read call request status',
        'GET',
        `${callUrl(requestUuid)}?status=queued`,
        undefined,
        { notFoundIsDone: true },
      );
      if (queued.status === 404) return null;
      const word = boundedStatusWord((queued.body as { call_status?: unknown } | undefined)?.call_status);
      // Plivo still holds the request, so its call is not answered yet, whatever word it gives.
      const status = Object.hasOwn(LIVE_STATUSES, word) ? LIVE_STATUSES[word]! : 'queued';
      return { callSid: requestUuid, status, carrierStatus: word };
    },

    async transfer(callSid, target) {
      if (!isDialTarget(target))
        throw new Error('plivo transfer: target must be an E.164 number or a sip: address');
      // The A leg is sent to our transfer route, which answers with the <Dial> of the target.
      const alegUrl = `${options.publicUrl()}${PLIVO_TRANSFER_PATH}?to=${encodeURIComponent(target)}`;
      await call('transfer call', 'POST', callUrl(callSid), {
        legs: 'aleg',
        aleg_url: alegUrl,
        aleg_method: 'POST',
      });
    },

    async originate(request) {
      const body: Record<string, unknown> = {
        from: request.from.replace(/^\+/, ''),
        to: request.to.replace(/^\+/, ''),
        answer_url: request.answerUrl,
        answer_method: 'POST',
        hangup_url: request.hangupUrl,
        hangup_method: 'POST',
      };
      if (request.ringTimeoutSec !== undefined) body.ring_timeout = request.ringTimeoutSec;
      if (request.machineDetection !== undefined) {
        body.machine_detection = request.machineDetection;
        if (request.machineDetectionTimeMs !== undefined)
          body.machine_detection_time = request.machineDetectionTimeMs;
        if (request.machineDetectionUrl !== undefined) {
          body.machine_detection_url = request.machineDetectionUrl;
          body.machine_detection_method = 'POST';
        }
      }
      const answer = await call('create call', 'POST', callsUrl, body);
      const uuid = (answer.body as { request_uuid?: unknown } | undefined)?.request_uuid;
      const requestUuid = Array.isArray(uuid) ? uuid[0] : uuid;
      if (typeof requestUuid !== 'string' || requestUuid === '') {
        // The call may exist already, so a retry could place a second one.
        throw new CarrierApiError('plivo', 'plivo create call: response lacks request_uuid', {
          retryable: false,
        });
      }
      return { requestUuid };
    },

    async status(callSid) {
      const live = await call('read call status', 'GET', `${callUrl(callSid)}?status=live`, undefined, {
        notFoundIsDone: true,
      });
      if (live.status !== 404) {
        const word = boundedStatusWord((live.body as { call_status?: unknown } | undefined)?.call_status);
        return { callSid, status: lookup(LIVE_STATUSES, word), carrierStatus: word };
      }
      const ended = await call('read call status', 'GET', callUrl(callSid), undefined, {
        notFoundIsDone: true,
      });
      if (ended.status === 404) return null;
      const word = boundedStatusWord((ended.body as { call_state?: unknown } | undefined)?.call_state);
      return { callSid, status: lookup(ENDED_STATES, word), carrierStatus: word };
    },
  };
}

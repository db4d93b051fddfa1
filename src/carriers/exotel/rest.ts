// The Exotel REST calls callbridge makes (docs/protocols/exotel.md, REST): form-encoded, HTTP Basic
// with the API key and token, each bounded by a timeout. Exotel's classic API has no hang-up or
// transfer for a live call: the stream's close ends the Voicebot applet instead (adapter.ts).
import { CarrierApiError, retryableStatus } from '../../errors.js';
import { carrierRequest } from '../carrier-request.js';
import { boundedStatusWord, type CarrierCallState, type CarrierCallStatus } from '../call-status.js';

const CARRIER = 'exotel';

export interface ExotelRestOptions {
  /** Base URL, `https://api.exotel.com` (or `https://api.in.exotel.com`) in production. */
  apiUrl: string;
  accountSid: string;
  apiKey: string;
  apiToken: string;
  timeoutMs: number;
}

export interface ExotelOriginateRequest {
  /** The number to call (Exotel's `From`: the party called first). */
  to: string;
  /** The ExoPhone the call comes from (Exotel's `CallerId`). */
  callerId: string;
  /** The flow the answered call enters: `http://my.exotel.com/{sid}/exoml/start_voice/{app_id}`. */
  flowUrl: string;
  /** Passed back to the flow's requests and the status callback. */
  customField?: string;
  statusCallback?: string;
  timeLimitS?: number;
  timeoutS?: number;
}

export interface ExotelRest {
  originate(req: ExotelOriginateRequest): Promise<CarrierCallState>;
  status(callSid: string): Promise<CarrierCallState>;
}

const STATUSES: Readonly<Record<string, CarrierCallStatus>> = Object.freeze({
  queued: 'queued',
  ringing: 'ringing',
  'in-progress': 'in-progress',
  completed: 'completed',
  busy: 'busy',
  'no-answer': 'no-answer',
  failed: 'failed',
  canceled: 'canceled',
});

// Only Exotel's numeric code goes into messages: its text can quote numbers from the request.
function exotelErrorCode(body: unknown): string | undefined {
  const exception = (body as { RestException?: { Code?: unknown } } | undefined)?.RestException;
  const code = typeof exception === 'object' && exception !== null ? exception.Code : undefined;
  return typeof code === 'number' || (typeof code === 'string' && /^\d{1,10}$/.test(code))
    ? String(code)
    : undefined;
}

function callState(body: unknown, operation: string): CarrierCallState {
  const call = (body as { Call?: { Sid?: unknown; Status?: unknown } } | undefined)?.Call;
  const sid = typeof call === 'object' && call !== null ? call.Sid : undefined;
  if (typeof sid !== 'string' || !/^[A-Za-z0-9_-]{1,64}$/.test(sid)) {
    // The call may exist already, so a retry could place a second one.
    throw new CarrierApiError(CARRIER, `exotel ${operation}: response lacks the call's Sid`, {
      retryable: false,
    });
  }
  const carrierStatus = boundedStatusWord(call?.Status);
  const status = Object.hasOwn(STATUSES, carrierStatus) ? STATUSES[carrierStatus]! : 'unknown';
  return { callSid: sid, status, carrierStatus };
}

export function createExotelRest(options: ExotelRestOptions): ExotelRest {
  const callsUrl = `${options.apiUrl.replace(/\/+$/, '')}/v1/Accounts/${encodeURIComponent(options.accountSid)}/Calls`;
  // Built once; the token lives only in this header, never in a message or URL.
  const authorization = `Basic ${Buffer.from(`${options.apiKey}:${options.apiToken}`).toString('base64')}`;

  async function request(operation: string, method: 'GET' | 'POST', url: string, form?: URLSearchParams) {
    const headers: Record<string, string> = { authorization, accept: 'application/json' };
    if (form !== undefined) headers['content-type'] = 'application/x-www-form-urlencoded';
    const res = await carrierRequest({
      carrier: CARRIER,
      operation,
      method,
      url,
      headers,
      body: form,
      timeoutMs: options.timeoutMs,
    });
    if (res.status < 200 || res.status > 299) {
      const carrierCode = exotelErrorCode(res.body);
      const detail = carrierCode === undefined ? '' : ` (Exotel error ${carrierCode})`;
      throw new CarrierApiError(CARRIER, `exotel ${operation}: HTTP ${res.status}${detail}`, {
        retryable: retryableStatus(res.status),
        status: res.status,
        carrierCode,
      });
    }
    return callState(res.body, operation);
  }

  return {
    originate(req: ExotelOriginateRequest): Promise<CarrierCallState> {
      const form = new URLSearchParams({ From: req.to, CallerId: req.callerId, Url: req.flowUrl });
      if (req.customField !== undefined) form.set('CustomField', req.customField);
      if (req.statusCallback !== undefined) form.set('StatusCallback', req.statusCallback);
      if (req.timeLimitS !== undefined) form.set('TimeLimit', String(req.timeLimitS));
      if (req.timeoutS !== undefined) form.set('TimeOut', String(req.timeoutS));
      // `.json` asks for a JSON answer instead of XML.
      return request('create call', 'POST', `${callsUrl}/connect.json`, form);
    },

    status(callSid: string): Promise<CarrierCallState> {
      return request('read call', 'GET', `${callsUrl}/${encodeURIComponent(callSid)}.json`);
    },
  };
}

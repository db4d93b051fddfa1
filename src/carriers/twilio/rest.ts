// The few Twilio REST calls callbridge makes (PROTOCOLS.md section 2, "REST"): form-encoded POSTs
// with HTTP Basic auth, each bounded by a timeout.
import { dialTwiml } from './twiml.js';

export const CARRIER_API_ERROR_CODE = 'CALLBRIDGE_CARRIER_API';

/** A Twilio REST call that failed; `retryable` is true for 5xx, 429, timeouts and network errors. */
export class CarrierApiError extends Error {
  readonly code = CARRIER_API_ERROR_CODE;
  readonly retryable: boolean;
  /** HTTP status, absent when no response arrived. */
  readonly status: number | undefined;
  /** Twilio's numeric error code from the response body, when it sent one. */
  readonly twilioCode: number | undefined;
  constructor(
    message: string,
    opts: { retryable: boolean; status?: number; twilioCode?: number; cause?: unknown },
  ) {
    super(message, { cause: opts.cause });
    this.name = 'CarrierApiError';
    this.retryable = opts.retryable;
    this.status = opts.status;
    this.twilioCode = opts.twilioCode;
  }
}

export interface TwilioRestOptions {
  /** Base URL, `https://api.twilio.com` in production. */
  apiUrl: string;
  accountSid: string;
  authToken: string;
  timeoutMs: number;
}

export type TwilioFormFields = Record<string, string | string[]>;

export interface TwilioRest {
  hangup(callSid: string): Promise<void>;
  update(callSid: string, fields: Record<string, string>): Promise<void>;
  /** Moves the caller to `target` (E.164 or `sip:`); this ends our media stream. */
  transfer(callSid: string, target: string): Promise<void>;
  createCall(fields: TwilioFormFields): Promise<{ sid: string; status: string }>;
}

function formBody(fields: TwilioFormFields): URLSearchParams {
  const body = new URLSearchParams();
  for (const [key, value] of Object.entries(fields)) {
    // Repeatable parameters (e.g. StatusCallbackEvent) are sent once per value.
    if (Array.isArray(value)) for (const item of value) body.append(key, item);
    else body.append(key, value);
  }
  return body;
}

// Only Twilio's numeric code goes into messages: its text can quote phone numbers from the request.
function twilioErrorCode(body: unknown): number | undefined {
  if (typeof body !== 'object' || body === null) return undefined;
  const code = (body as { code?: unknown }).code;
  return typeof code === 'number' ? code : undefined;
}

export function createTwilioRest(options: TwilioRestOptions): TwilioRest {
  const callsUrl = `${options.apiUrl.replace(/\/+$/, '')}/2010-04-01/Accounts/${encodeURIComponent(options.accountSid)}/Calls`;
  // Built once; the token lives only in this header, never in a message or URL.
  const authorization = `Basic ${Buffer.from(`${options.accountSid}:${options.authToken}`).toString('base64')}`;

  async function post(operation: string, url: string, fields: TwilioFormFields): Promise<unknown> {
    const signal = AbortSignal.timeout(options.timeoutMs);
    let response: Response;
    let text: string;
    try {
      response = await fetch(url, {
        method: 'POST',
        headers: {
          authorization,
          accept: 'application/json',
          'content-type': 'application/x-www-form-urlencoded',
        },
        body: formBody(fields),
        signal,
      });
      // Read inside the try: the timeout also bounds a body that trickles in.
      text = await response.text();
    } catch (err) {
      const timedOut = signal.aborted;
      const reason = timedOut ? `timed out after ${options.timeoutMs} ms` : 'network error';
      throw new CarrierApiError(`Twilio ${operation}: ${reason}`, { retryable: true, cause: err });
    }
    let body: unknown;
    try {
      body = text === '' ? undefined : JSON.parse(text);
    } catch {
      body = undefined;
    }
    if (!response.ok) {
      const status = response.status;
      const twilioCode = twilioErrorCode(body);
      const detail = twilioCode === undefined ? '' : ` (Twilio error ${twilioCode})`;
      throw new CarrierApiError(`Twilio ${operation}: HTTP ${status}${detail}`, {
        retryable: status >= 500 || status === 429,
        status,
        twilioCode,
      });
    }
    return body;
  }

  function callUrl(callSid: string): string {
    return `${callsUrl}/${encodeURIComponent(callSid)}.json`;
  }

  async function update(callSid: string, fields: Record<string, string>): Promise<void> {
    await post('update call', callUrl(callSid), fields);
  }

  return {
    update,

    async hangup(callSid: string): Promise<void> {
      await post('hang up call', callUrl(callSid), { Status: 'completed' });
    },

    async transfer(callSid: string, target: string): Promise<void> {
      await post('transfer call', callUrl(callSid), { Twiml: dialTwiml(target) });
    },

    async createCall(fields: TwilioFormFields): Promise<{ sid: string; status: string }> {
      const body = await post('create call', `${callsUrl}.json`, fields);
      const call = (typeof body === 'object' && body !== null ? body : {}) as {
        sid?: unknown;
        status?: unknown;
      };
      if (typeof call.sid !== 'string' || typeof call.status !== 'string') {
        // The call may exist already, so a retry could place a second one.
        throw new CarrierApiError('Twilio create call: response lacks sid or status', { retryable: false });
      }
      return { sid: call.sid, status: call.status };
    },
  };
}

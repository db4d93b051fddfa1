// The few Twilio REST calls callbridge makes (docs/protocols/twilio.md, "REST"): form-encoded POSTs
// with HTTP Basic auth, each bounded by a timeout.
import { CarrierApiError, retryableStatus } from '../../errors.js';
import { dialTwiml } from './twiml.js';

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
  /** The call's status word and duration; null when Twilio has no such call. */
  getCall(callSid: string): Promise<{ status: string; durationS: number | null } | null>;
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

  async function post(operation: string, url: string, fields: TwilioFormFields | null): Promise<unknown> {
    const signal = AbortSignal.timeout(options.timeoutMs);
    let response: Response;
    let text: string;
    try {
      response = await fetch(
        url,
        fields === null
          ? { method: 'GET', headers: { authorization, accept: 'application/json' }, signal }
          : {
              method: 'POST',
              headers: {
                authorization,
                accept: 'application/json',
                'content-type': 'application/x-www-form-urlencoded',
              },
              body: formBody(fields),
              signal,
            },
      );
      // Read inside the try: the timeout also bounds a body that trickles in.
      text = await response.text();
    } catch (err) {
      const timedOut = signal.aborted;
      const reason = timedOut ? `timed out after ${options.timeoutMs} ms` : 'network error';
      throw new CarrierApiError('twilio', `Twilio ${operation}: ${reason}`, { retryable: true, cause: err });
    }
    let body: unknown;
    try {
      body = text === '' ? undefined : JSON.parse(text);
    } catch {
      body = undefined;
    }
    if (!response.ok) {
      const status = response.status;
      const carrierCode = twilioErrorCode(body);
      const detail = carrierCode === undefined ? '' : ` (Twilio error ${carrierCode})`;
      throw new CarrierApiError('twilio', `Twilio ${operation}: HTTP ${status}${detail}`, {
        retryable: retryableStatus(status),
        status,
        carrierCode,
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
        throw new CarrierApiError('twilio', 'Twilio create call: response lacks sid or status', {
          retryable: false,
        });
      }
      return { sid: call.sid, status: call.status };
    },

    async getCall(callSid: string) {
      let body: unknown;
      try {
        body = await post('read call', callUrl(callSid), null);
      } catch (err) {
        if (err instanceof CarrierApiError && err.status === 404) return null;
        throw err;
      }
      const call = (typeof body === 'object' && body !== null ? body : {}) as {
        status?: unknown;
        duration?: unknown;
      };
      if (typeof call.status !== 'string') {
        throw new CarrierApiError('twilio', 'Twilio read call: response lacks status', { retryable: true });
      }
      // Twilio gives the duration as a string once the call has ended, null before.
      const duration =
        typeof call.duration === 'string' || typeof call.duration === 'number'
          ? Number(call.duration)
          : Number.NaN;
      return { status: call.status, durationS: Number.isFinite(duration) ? duration : null };
    },
  };
}

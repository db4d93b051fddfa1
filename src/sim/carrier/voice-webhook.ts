// Step one of an inbound Twilio call: the voice webhook (PROTOCOLS.md section 2). Twilio POSTs the
// call's parameters form-encoded, signed with X-Twilio-Signature, and acts on the TwiML answer.
import { computeTwilioSignature } from '../../carriers/twilio/signature.js';
import { readTwimlAnswer, type TwimlAnswer } from './twiml.js';

export interface VoiceWebhookRequest {
  url: string;
  callSid: string;
  accountSid: string;
  from: string;
  to: string;
  authToken?: string;
  timeoutMs: number;
  /** The caller giving up before the call is answered. */
  signal?: AbortSignal;
}

export type VoiceWebhookOutcome =
  | { ok: true; answer: TwimlAnswer; observerToken: string | undefined; warnings: string[] }
  | { ok: false; error: string };

/** The header with which the server offers its per-call observer feed. */
export const OBSERVER_HEADER = 'x-callbridge-observer';

// Twilio answers only XML; other content types fail the call on a real number (error 12300).
const XML_CONTENT_TYPE = /^(text|application)\/xml\b/i;

export async function postVoiceWebhook(req: VoiceWebhookRequest): Promise<VoiceWebhookOutcome> {
  const params: Record<string, string> = {
    CallSid: req.callSid,
    AccountSid: req.accountSid,
    From: req.from,
    To: req.to,
    Caller: req.from,
    Called: req.to,
    CallStatus: 'ringing',
    Direction: 'inbound',
    ApiVersion: '2010-04-01',
  };
  const headers: Record<string, string> = {
    'content-type': 'application/x-www-form-urlencoded',
    accept: '*/*',
    'user-agent': 'TwilioProxy/1.1',
  };
  if (req.authToken !== undefined) {
    headers['x-twilio-signature'] = computeTwilioSignature(req.authToken, req.url, params);
  }
  let response: Response;
  let body: string;
  try {
    response = await fetch(req.url, {
      method: 'POST',
      headers,
      body: new URLSearchParams(params).toString(),
      // A carrier does not chase redirects of a voice webhook: a 3xx is a misconfigured endpoint.
      redirect: 'manual',
      signal: AbortSignal.any([AbortSignal.timeout(req.timeoutMs), ...(req.signal ? [req.signal] : [])]),
    });
    body = await response.text();
  } catch (err) {
    return { ok: false, error: `voice webhook ${req.url} unreachable: ${describeFetchError(err)}` };
  }
  if (response.status < 200 || response.status > 299) {
    return { ok: false, error: `voice webhook answered HTTP ${response.status}${errorDetail(body)}` };
  }
  const warnings: string[] = [];
  const type = response.headers.get('content-type') ?? '';
  if (!XML_CONTENT_TYPE.test(type)) {
    warnings.push(`voice webhook answered content-type "${type}"; Twilio expects text/xml`);
  }
  const token = response.headers.get(OBSERVER_HEADER)?.trim();
  return { ok: true, answer: readTwimlAnswer(body), observerToken: token || undefined, warnings };
}

/** The server's JSON error message when it sent one, so the user sees why it refused. */
function errorDetail(body: string): string {
  try {
    const message = (JSON.parse(body) as { error?: { message?: unknown } }).error?.message;
    if (typeof message === 'string') return `: ${message}`;
  } catch {
    // Not our JSON error shape: the status says enough.
  }
  return '';
}

function describeFetchError(err: unknown): string {
  if (err instanceof Error && err.name === 'TimeoutError') return 'no answer in time';
  if (err instanceof Error && err.name === 'AbortError') return 'the caller gave up';
  const cause = (err as { cause?: { code?: string; message?: string } }).cause;
  return cause?.code ?? cause?.message ?? (err as Error).message;
}

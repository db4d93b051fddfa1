// The simulated carrier playing Plivo (docs/protocols/plivo.md): it posts the answer URL's form,
// signed with X-Plivo-Signature-V3 when PLIVO_AUTH_TOKEN is in the environment, reads the XML
// answer, opens the <Stream> it names, and after the call posts the hang-up URL and the stream's
// status callback.
import { randomBytes, randomUUID } from 'node:crypto';
import { computePlivoSignatureV3 } from '../../../carriers/plivo/signature.js';
import type { SimAnswer, SimCallSpec, SimDialect } from '../dialect.js';
import { OBSERVER_HEADER } from '../voice-webhook.js';
import { checkMediaUrl, describeRefusal, postWebhook } from './http.js';
import { createPlivoSimStream } from './plivo-stream.js';
import { readPlivoContentType, readPlivoXml } from './plivo-xml.js';

const ANSWER_PATH = '/carriers/plivo/answer';
const HANGUP_PATH = '/carriers/plivo/hangup';
const XML_CONTENT_TYPE = /^(text|application)\/xml\b/i;
const EXTRA_HEADERS = /^([A-Za-z0-9]+=[A-Za-z0-9]*)(,[A-Za-z0-9]+=[A-Za-z0-9]*)*$/;

type Form = Record<string, string>;

/** A form post as Plivo sends it, signed with X-Plivo-Signature-V3 when an auth token is given. */
export function plivoForm(url: string, params: Form, authToken: string | undefined) {
  const headers: Record<string, string> = {
    'content-type': 'application/x-www-form-urlencoded',
    'user-agent': 'PlivoHTTP',
  };
  if (authToken !== undefined) {
    const nonce = randomBytes(10).toString('hex');
    headers['x-plivo-signature-v3'] = computePlivoSignatureV3(authToken, url, params, nonce);
    headers['x-plivo-signature-v3-nonce'] = nonce;
  }
  return { url, headers, body: new URLSearchParams(params).toString() };
}

/** Plivo writes numbers without the `+`. */
const bare = (number: string) => number.replace(/^\+/, '');

export const plivoDialect: SimDialect = {
  name: 'plivo',

  describeSigning(env) {
    return env.PLIVO_AUTH_TOKEN ? 'signed with X-Plivo-Signature-V3' : 'unsigned: PLIVO_AUTH_TOKEN not set';
  },

  async announce(call: SimCallSpec): Promise<SimAnswer> {
    const authToken = call.env.PLIVO_AUTH_TOKEN || undefined;
    const accountId = call.outbound?.accountSid ?? (call.env.PLIVO_AUTH_ID || 'MASIMULATED000000000');
    // A call the server placed fetches the answer URL it was created with; its hang-up URL is
    // posted by whoever placed it (src/sim/callee/lines/plivo.ts).
    const callUuid = call.outbound?.callSid ?? randomUUID();
    const answerUrl = call.outbound?.answerUrl ?? `${call.server}${ANSWER_PATH}`;
    const params: Form = {
      CallUUID: callUuid,
      RequestUUID: call.outbound?.requestId ?? callUuid,
      From: bare(call.from),
      To: bare(call.to),
      CallerName: bare(call.from),
      Direction: call.outbound ? 'outbound' : 'inbound',
      CallStatus: 'in-progress',
      Event: 'StartApp',
      BillRate: '0.00850',
    };
    const answer = await postWebhook({
      ...plivoForm(answerUrl, params, authToken),
      timeoutMs: call.timeoutMs,
      signal: call.signal,
    });
    if (!answer.ok) return { kind: 'failed', error: `answer URL: ${answer.error}` };
    if (answer.status < 200 || answer.status > 299) {
      return { kind: 'failed', error: `answer URL refused: ${describeRefusal(answer.status, answer.body)}` };
    }
    const warnings: string[] = [];
    const type = answer.headers.get('content-type') ?? '';
    if (!XML_CONTENT_TYPE.test(type))
      warnings.push(`answer URL answered content-type "${type}"; Plivo expects XML`);
    const xml = readPlivoXml(answer.body);
    if (xml.kind === 'declined') return { kind: 'declined', reason: xml.reason, say: xml.say || undefined };

    const { attributes } = xml;
    const url = checkMediaUrl(xml.url, '<Stream>');
    if (url instanceof Error) return { kind: 'failed', error: url.message };
    if (attributes.bidirectional !== 'true')
      warnings.push('<Stream> is not bidirectional="true": the caller would hear nothing');
    if (attributes.keepCallAlive !== 'true')
      warnings.push('<Stream> lacks keepCallAlive="true": Plivo would move on to the next element');
    const contentType = readPlivoContentType(attributes.contentType ?? 'audio/x-l16;rate=8000');
    if (contentType === undefined) {
      return {
        kind: 'failed',
        error: `<Stream contentType="${attributes.contentType}"> is not one Plivo streams`,
      };
    }
    const extraHeaders = attributes.extraHeaders ?? '';
    if (extraHeaders !== '' && (!EXTRA_HEADERS.test(extraHeaders) || extraHeaders.length > 512)) {
      warnings.push(
        '<Stream extraHeaders> must be k=v pairs of [A-Za-z0-9], 512 bytes at most; Plivo rejects it',
      );
    }
    const statusCallbackUrl = attributes.statusCallbackUrl;
    const stream = createPlivoSimStream({
      url,
      callSid: callUuid,
      accountId,
      format: { ...contentType, channels: 1 },
      extraHeaders,
      afterHangup: async () => {
        const ended: Form = {
          ...params,
          CallStatus: 'completed',
          HangupCause: 'NORMAL_CLEARING',
          HangupCauseName: 'Normal Hangup',
          HangupSource: 'Caller',
        };
        if (statusCallbackUrl) {
          await postWebhook({
            ...plivoForm(
              statusCallbackUrl,
              { CallUUID: callUuid, Event: 'StopStream', StreamID: stream.streamSid },
              authToken,
            ),
            timeoutMs: call.timeoutMs,
          });
        }
        if (call.outbound) return;
        await postWebhook({
          ...plivoForm(`${call.server}${HANGUP_PATH}`, ended, authToken),
          timeoutMs: call.timeoutMs,
        });
      },
    });
    const observerToken = answer.headers.get(OBSERVER_HEADER)?.trim() || undefined;
    return { kind: 'stream', stream, observerToken, warnings };
  },
};

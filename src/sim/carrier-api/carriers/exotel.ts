// Exotel's classic Calls API as the simulated carrier answers it (docs/protocols/exotel.md sections
// 8 and 9): HTTP Basic with any API key and token, the account in the path;
// `POST /v1/Accounts/{sid}/Calls/connect.json` rings `From` and, once answered, runs the flow at `Url`
// (the simulated callee plays its Voicebot applet); `GET …/Calls/{CallSid}.json` reads the call.
// Exotel has no hang-up in this API and no answering-machine detection. Errors come as Exotel's
// `RestException` with the HTTP status and a message.
import { randomBytes } from 'node:crypto';
import type { SimCallRecord } from '../call-log.js';
import { httpUrl, type SimApiReply, type SimApiRequest, type SimCarrierApi } from '../handler.js';

/** Numbers as Exotel takes them: E.164, or national digits with the trunk 0. */
const NUMBER = /^\+?\d{6,15}$/;
const MAX_CUSTOM_FIELD_CHARS = 4096;
const MAX_SECONDS = 14_400;

function error(status: number, message: string): SimApiReply {
  return { status, body: { RestException: { Status: status, Message: message } } };
}

function field(body: unknown, key: string): string | undefined {
  const value =
    typeof body === 'object' && body !== null ? (body as Record<string, unknown>)[key] : undefined;
  return typeof value === 'string' ? value : undefined;
}

function hasBasicAuth(req: SimApiRequest): boolean {
  const header = req.headers.authorization;
  if (typeof header !== 'string' || !header.startsWith('Basic ')) return false;
  const decoded = Buffer.from(header.slice(6), 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  return colon > 0 && colon < decoded.length - 1;
}

/** A whole number of seconds from 1 to four hours, or absent. */
function seconds(value: string | undefined): boolean {
  return (
    value === undefined || (/^\d{1,5}$/.test(value) && Number(value) >= 1 && Number(value) <= MAX_SECONDS)
  );
}

function resource(call: SimCallRecord, account: string): Record<string, unknown> {
  const create = call.requests.find((request) => request.action === 'create')?.body;
  return {
    Call: {
      Sid: call.callSid,
      AccountSid: account,
      From: field(create, 'From') ?? null,
      To: field(create, 'CallerId') ?? null,
      PhoneNumberSid: field(create, 'CallerId') ?? null,
      Status: call.status ?? (call.state === 'ended' ? 'completed' : 'queued'),
      Duration: call.durationS === undefined ? null : call.durationS,
      Direction: 'outbound-api',
    },
  };
}

export const exotelSimApi: SimCarrierApi = {
  carrier: 'exotel',

  authenticate(req) {
    if (hasBasicAuth(req) && /^\/v1\/Accounts\/[^/]+\//.test(req.path)) return null;
    return error(401, 'Authentication is required to view this page.');
  },

  routes: [
    {
      method: 'POST',
      path: '/v1/Accounts/:account/Calls/connect.json',
      handle(req, { calls, placed }) {
        const to = field(req.body, 'From');
        const callerId = field(req.body, 'CallerId');
        const flowUrl = field(req.body, 'Url');
        if (to === undefined || !NUMBER.test(to)) return error(400, "The 'From' number is not valid");
        if (callerId === undefined || !NUMBER.test(callerId))
          return error(400, "The 'CallerId' is not valid");
        if (!httpUrl(flowUrl)) return error(400, "The 'Url' must be the http(s) URL of a flow");
        const statusUrl = field(req.body, 'StatusCallback');
        if (statusUrl !== undefined && !httpUrl(statusUrl))
          return error(400, "The 'StatusCallback' is not a URL");
        if (!seconds(field(req.body, 'TimeLimit')) || !seconds(field(req.body, 'TimeOut'))) {
          return error(400, "'TimeLimit' and 'TimeOut' must be whole seconds");
        }
        const customField = field(req.body, 'CustomField');
        if (customField !== undefined && customField.length > MAX_CUSTOM_FIELD_CHARS) {
          return error(400, "The 'CustomField' is too long");
        }
        const callSid = randomBytes(16).toString('hex');
        const call = calls.record('exotel', callSid, 'create', req.body, (record) => {
          record.status = 'queued';
        });
        placed({
          carrier: 'exotel',
          callSid,
          accountSid: req.params.account!,
          to,
          from: callerId,
          answerUrl: flowUrl!,
          statusUrl: statusUrl ?? null,
          amdUrl: null,
          customField: customField ?? null,
        });
        return { status: 200, body: resource(call, req.params.account!) };
      },
    },
    {
      method: 'GET',
      path: '/v1/Accounts/:account/Calls/:callSid.json',
      handle(req, { calls }) {
        const call = calls.get((req.params['callSid.json'] ?? '').replace(/\.json$/, ''));
        if (call === undefined || call.carrier !== 'exotel') return error(404, 'Call not found');
        return { status: 200, body: resource(call, req.params.account!) };
      },
    },
  ],
};

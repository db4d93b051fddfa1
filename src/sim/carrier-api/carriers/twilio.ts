// Twilio's Calls API as the simulated carrier answers it (docs/protocols/twilio.md, "REST"): HTTP
// Basic auth whose account SID matches the path; `POST …/Calls.json` places a call (201, `queued`)
// that the simulated callee then answers, or not; `POST …/Calls/{sid}.json` hangs up
// (`Status=completed|canceled`), transfers (`Twiml`) or redirects (`Url`); `GET …/Calls/{sid}.json`
// reads its status. Errors carry Twilio's numeric codes (20404 for an unknown call, 21201/21205 for
// a missing number or URL).
import { randomBytes } from 'node:crypto';
import type { SimCallRecord } from '../call-log.js';
import { httpUrl, type SimApiReply, type SimApiRequest, type SimCarrierApi } from '../handler.js';

const E164 = /^\+[1-9]\d{1,14}$/;
const FINAL = new Set(['completed', 'busy', 'no-answer', 'failed', 'canceled']);

function error(status: number, code: number, message: string): SimApiReply {
  return { status, body: { code, message, status } };
}

function field(body: unknown, key: string): string | undefined {
  const value =
    typeof body === 'object' && body !== null ? (body as Record<string, unknown>)[key] : undefined;
  return typeof value === 'string' ? value : undefined;
}

function accountOf(req: SimApiRequest): string | undefined {
  const header = req.headers.authorization;
  if (typeof header !== 'string' || !header.startsWith('Basic ')) return undefined;
  const decoded = Buffer.from(header.slice(6), 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  return colon > 0 && colon < decoded.length - 1 ? decoded.slice(0, colon) : undefined;
}

/** The `:callSid.json` path segment without its suffix. */
function sidOf(req: SimApiRequest): string {
  return (req.params['callSid.json'] ?? '').replace(/\.json$/, '');
}

function resource(call: SimCallRecord, account: string): Record<string, unknown> {
  return {
    sid: call.callSid,
    account_sid: account,
    status: call.status ?? (call.state === 'ended' ? 'completed' : 'queued'),
    duration: call.durationS === undefined ? null : String(call.durationS),
    direction: 'outbound-api',
  };
}

export const twilioSimApi: SimCarrierApi = {
  carrier: 'twilio',

  authenticate(req) {
    const account = accountOf(req);
    if (account !== undefined && req.path.startsWith(`/2010-04-01/Accounts/${account}/`)) return null;
    return error(401, 20003, 'Authenticate');
  },

  routes: [
    {
      method: 'POST',
      path: '/2010-04-01/Accounts/:account/Calls.json',
      handle(req, { calls, placed }) {
        const to = field(req.body, 'To');
        const from = field(req.body, 'From');
        const answerUrl = field(req.body, 'Url');
        if (to === undefined || !E164.test(to)) return error(400, 21201, "The 'To' number is not valid");
        if (from === undefined || !E164.test(from))
          return error(400, 21212, "The 'From' number is not valid");
        if (!httpUrl(answerUrl)) return error(400, 21205, 'Url is not a valid URL');
        const statusUrl = field(req.body, 'StatusCallback');
        const amdUrl = field(req.body, 'AsyncAmdStatusCallback');
        const detects =
          field(req.body, 'MachineDetection') !== undefined && field(req.body, 'AsyncAmd') === 'true';
        const callSid = `CA${randomBytes(16).toString('hex')}`;
        const call = calls.record('twilio', callSid, 'create', req.body, (record) => {
          record.status = 'queued';
        });
        placed({
          carrier: 'twilio',
          callSid,
          accountSid: req.params.account!,
          to,
          from,
          answerUrl: answerUrl!,
          statusUrl: httpUrl(statusUrl) ? statusUrl : null,
          amdUrl: detects && httpUrl(amdUrl) ? amdUrl : null,
        });
        return { status: 201, body: { ...resource(call, req.params.account!), to, from } };
      },
    },
    {
      method: 'POST',
      path: '/2010-04-01/Accounts/:account/Calls/:callSid.json',
      handle(req, { calls }) {
        const callSid = sidOf(req);
        const known = calls.get(callSid);
        if (known === undefined) return error(404, 20404, 'The requested resource was not found');
        const status = field(req.body, 'Status');
        const twiml = field(req.body, 'Twiml');
        if (status === 'completed' || status === 'canceled') {
          const call = calls.record('twilio', callSid, 'hangup', req.body, (record) => {
            if (record.state === 'ended') return;
            // Canceling a call still ringing ends it `canceled`; hanging up an answered one, `completed`.
            record.status = record.state === 'ringing' ? 'canceled' : 'completed';
            record.state = 'ended';
          });
          return { status: 200, body: resource(call, req.params.account!) };
        }
        if (twiml !== undefined || field(req.body, 'Url') !== undefined) {
          if (known.state === 'ended' || (known.status !== undefined && FINAL.has(known.status))) {
            return error(400, 21220, 'Call is not in-progress. Cannot redirect.');
          }
          const target = twiml === undefined ? undefined : /<Dial>([^<]*)<\/Dial>/.exec(twiml)?.[1];
          const call = calls.record('twilio', callSid, 'transfer', req.body, (record) => {
            if (target !== undefined) record.transferredTo = target;
          });
          return { status: 200, body: resource(call, req.params.account!) };
        }
        return error(400, 21218, 'Status, Twiml or Url is required');
      },
    },
    {
      method: 'GET',
      path: '/2010-04-01/Accounts/:account/Calls/:callSid.json',
      handle(req, { calls }) {
        const call = calls.get(sidOf(req));
        if (call === undefined) return error(404, 20404, 'The requested resource was not found');
        return { status: 200, body: resource(call, req.params.account!) };
      },
    },
  ],
};

// Plivo's REST API as the simulated carrier answers it (docs/protocols/plivo.md sections 8 and 9):
// Basic auth whose Auth ID matches the path, hang-up `DELETE
// /v1/Account/{id}/Call/{uuid}/` (204; 404 once the call is gone), transfer `POST …/Call/{uuid}/`
// (202), outbound `POST …/Call/` (201 with a request_uuid; the simulated callee then answers, or
// not), and a call's status `GET …/Call/{uuid}/` (`?status=live` for a live call). Errors are
// Plivo's `{api_id, error}`.
//
// As on Plivo, a placed call has two ids: the `request_uuid` the create request is answered with,
// and the call's own CallUUID, which its webhooks bring (with the request's as `RequestUUID`). The
// call paths know the call by its CallUUID only; until it is answered, the request UUID reads it
// (`GET …/Call/{request_uuid}/?status=queued`) and cancels it (`DELETE …/Request/{request_uuid}/`).
import type { SimCallLog } from '../call-log.js';
import { httpUrl, type SimApiReply, type SimApiRequest, type SimCarrierApi } from '../handler.js';

const NOT_FOUND: SimApiReply = { status: 404, body: { api_id: 'sim', error: 'not found' } };
/** A call still waiting to be answered, as the queued-request read shows it. */
const QUEUED_STATUS: Readonly<Record<string, string>> = Object.freeze({
  queued: 'queued',
  ringing: 'ringing',
});
/** Plivo takes numbers as digits, with or without the `+`. */
const NUMBER = /^\+?[1-9]\d{1,14}$/;
const MAX_RING_TIMEOUT_S = 120;

/** A live call's `call_status`, in Plivo's words. */
const LIVE_STATUS: Readonly<Record<string, string>> = Object.freeze({
  ringing: 'ringing',
  'in-progress': 'in-progress',
});
/** An ended call's `call_state`, in Plivo's words. */
const ENDED_STATE: Readonly<Record<string, string>> = Object.freeze({
  completed: 'ANSWER',
  busy: 'BUSY',
  'no-answer': 'NO_ANSWER',
  failed: 'FAILED',
  canceled: 'CANCEL',
});

function badRequest(error: string): SimApiReply {
  return { status: 400, body: { api_id: 'sim', error } };
}

function field(body: unknown, key: string): unknown {
  return typeof body === 'object' && body !== null ? (body as Record<string, unknown>)[key] : undefined;
}

function authId(req: SimApiRequest): string | undefined {
  const header = req.headers.authorization;
  if (typeof header !== 'string' || !header.startsWith('Basic ')) return undefined;
  const decoded = Buffer.from(header.slice(6), 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  return colon > 0 && colon < decoded.length - 1 ? decoded.slice(0, colon) : undefined;
}

/** An id that names a create request, not a call: the call paths do not know it. */
function isRequestOnly(calls: SimCallLog, id: string): boolean {
  return calls.get(id) === undefined && calls.byRequestId('plivo', id) !== undefined;
}

export const plivoSimApi: SimCarrierApi = {
  carrier: 'plivo',

  authenticate(req) {
    const id = authId(req);
    // The Auth ID in the credentials must be the account the path names.
    if (id !== undefined && req.path.startsWith(`/v1/Account/${id}/`)) return null;
    return { status: 401, body: { api_id: 'sim', error: 'authentication failed' } };
  },

  routes: [
    {
      method: 'DELETE',
      path: '/v1/Account/:authId/Call/:callSid/',
      handle(req, { calls }) {
        const known = calls.get(req.params.callSid!);
        if (known?.state === 'ended' || isRequestOnly(calls, req.params.callSid!)) return NOT_FOUND;
        calls.record('plivo', req.params.callSid!, 'hangup', req.body, (call) => {
          // Hanging up a call still ringing cancels it; an answered one completes.
          if (call.status !== undefined) call.status = call.state === 'ringing' ? 'canceled' : 'completed';
          call.state = 'ended';
        });
        return { status: 204 };
      },
    },
    {
      method: 'POST',
      path: '/v1/Account/:authId/Call/:callSid/',
      handle(req, { calls }) {
        const known = calls.get(req.params.callSid!);
        if (known?.state === 'ended' || isRequestOnly(calls, req.params.callSid!)) return NOT_FOUND;
        const legs = field(req.body, 'legs');
        const alegUrl = field(req.body, 'aleg_url');
        if (legs !== 'aleg' || typeof alegUrl !== 'string') {
          return { status: 400, body: { api_id: 'sim', error: 'legs=aleg and aleg_url are required' } };
        }
        // The call goes on where aleg_url leads; only our stream of it ends.
        calls.record('plivo', req.params.callSid!, 'transfer', req.body, (call) => {
          call.transferredTo = alegUrl;
        });
        return { status: 202, body: { api_id: 'sim', message: 'call transferred' } };
      },
    },
    {
      method: 'POST',
      path: '/v1/Account/:authId/Call/',
      handle(req, { calls, newId, placed }) {
        const { body } = req;
        if (typeof body !== 'object' || body === null || Array.isArray(body)) {
          return badRequest('the request body must be a JSON object');
        }
        const from = field(body, 'from');
        const to = field(body, 'to');
        const answerUrl = field(body, 'answer_url');
        const ringTimeout = field(body, 'ring_timeout');
        const machineDetection = field(body, 'machine_detection');
        if (typeof from !== 'string' || !NUMBER.test(from)) return badRequest('from is not a valid number');
        if (typeof to !== 'string' || !NUMBER.test(to)) return badRequest('to is not a valid number');
        if (!httpUrl(answerUrl)) return badRequest('answer_url is not a valid URL');
        for (const key of ['hangup_url', 'machine_detection_url']) {
          if (field(body, key) !== undefined && !httpUrl(field(body, key))) {
            return badRequest(`${key} is not a valid URL`);
          }
        }
        if (
          ringTimeout !== undefined &&
          !(
            Number.isInteger(Number(ringTimeout)) &&
            Number(ringTimeout) > 0 &&
            Number(ringTimeout) <= MAX_RING_TIMEOUT_S
          )
        ) {
          return badRequest(`ring_timeout must be a whole number of seconds from 1 to ${MAX_RING_TIMEOUT_S}`);
        }
        if (machineDetection !== undefined && machineDetection !== 'true' && machineDetection !== 'hangup') {
          return badRequest('machine_detection must be true or hangup');
        }
        const requestUuid = newId();
        const callUuid = newId();
        calls.record('plivo', callUuid, 'create', body, (call) => {
          call.requestId = requestUuid;
          call.status = 'queued';
        });
        const hangupUrl = field(body, 'hangup_url');
        const machineUrl = field(body, 'machine_detection_url');
        placed({
          carrier: 'plivo',
          callSid: callUuid,
          requestId: requestUuid,
          accountSid: req.params.authId!,
          to: `+${to.replace(/^\+/, '')}`,
          from: `+${from.replace(/^\+/, '')}`,
          answerUrl,
          statusUrl: httpUrl(hangupUrl) ? hangupUrl : null,
          amdUrl: machineDetection !== undefined && httpUrl(machineUrl) ? machineUrl : null,
        });
        return { status: 201, body: { api_id: 'sim', message: 'call fired', request_uuid: requestUuid } };
      },
    },
    {
      method: 'DELETE',
      path: '/v1/Account/:authId/Request/:requestId/',
      handle(req, { calls }) {
        // Only a request whose call has not been answered can be cancelled.
        const queued = calls.byRequestId('plivo', req.params.requestId!);
        if (queued === undefined || queued.state !== 'ringing') return NOT_FOUND;
        calls.record('plivo', queued.callSid, 'cancel', req.body, (call) => {
          call.status = 'canceled';
          call.state = 'ended';
        });
        return { status: 204 };
      },
    },
    {
      method: 'GET',
      path: '/v1/Account/:authId/Call/:callSid/',
      handle(req, { calls }) {
        if (req.query.get('status') === 'queued') {
          // A request whose call is not answered yet, by its request UUID only.
          const queued = calls.byRequestId('plivo', req.params.callSid!);
          if (queued === undefined || queued.state !== 'ringing') return NOT_FOUND;
          return {
            status: 200,
            body: {
              api_id: 'sim',
              request_uuid: queued.requestId,
              call_status: QUEUED_STATUS[queued.status ?? 'queued'] ?? 'queued',
              direction: 'outbound',
            },
          };
        }
        const call = calls.get(req.params.callSid!);
        const live = req.query.get('status') === 'live';
        if (call === undefined || (live && call.state === 'ended') || (!live && call.state !== 'ended')) {
          return NOT_FOUND;
        }
        // A call answered through a webhook rather than placed here has no status: it is in progress.
        const status = call.status ?? (call.state === 'ended' ? 'completed' : 'in-progress');
        return live
          ? { status: 200, body: { call_uuid: call.callSid, call_status: LIVE_STATUS[status] ?? 'queued' } }
          : { status: 200, body: { call_uuid: call.callSid, call_state: ENDED_STATE[status] ?? 'ANSWER' } };
      },
    },
  ],
};

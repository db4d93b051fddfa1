// Plivo's REST API as the simulated carrier answers it (docs/protocols/plivo.md section 8): Basic
// auth whose Auth ID matches the path, hang-up `DELETE /v1/Account/{id}/Call/{uuid}/` (204; 404 once
// the call is gone), transfer `POST …/Call/{uuid}/` (202), outbound `POST …/Call/` (201 with a
// request_uuid), and a call's status `GET …/Call/{uuid}/` (`?status=live` for a live call).
import type { SimApiReply, SimApiRequest, SimCarrierApi } from '../handler.js';

const NOT_FOUND: SimApiReply = { status: 404, body: { api_id: 'sim', error: 'not found' } };

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
        if (known?.state === 'ended') return NOT_FOUND;
        calls.record('plivo', req.params.callSid!, 'hangup', req.body, (call) => {
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
        if (known?.state === 'ended') return NOT_FOUND;
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
      handle(req, { calls, newId }) {
        const requestUuid = newId();
        calls.record('plivo', requestUuid, 'create', req.body);
        return { status: 201, body: { api_id: 'sim', message: 'call fired', request_uuid: requestUuid } };
      },
    },
    {
      method: 'GET',
      path: '/v1/Account/:authId/Call/:callSid/',
      handle(req, { calls }) {
        const call = calls.get(req.params.callSid!);
        const live = req.query.get('status') === 'live';
        if (call === undefined || (live && call.state === 'ended') || (!live && call.state !== 'ended')) {
          return NOT_FOUND;
        }
        return live
          ? { status: 200, body: { call_uuid: call.callSid, call_status: 'in-progress' } }
          : {
              status: 200,
              body: { call_uuid: call.callSid, call_state: 'ANSWER', hangup_cause_name: 'Normal Hangup' },
            };
      },
    },
  ],
};

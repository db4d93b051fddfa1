// Telnyx's Call Control API as the simulated carrier answers it (docs/protocols/telnyx.md section 8):
// Bearer auth, call actions on `/v2/calls/{call_control_id}/actions/{action}`, outbound calls on
// `POST /v2/calls`, a call's status on `GET /v2/calls/{call_control_id}`. A command on a call that
// has ended gets Telnyx's 422 with code 90018.
import type { SimCallRecord } from '../call-log.js';
import type { SimApiReply, SimApiRequest, SimCarrierApi } from '../handler.js';

const OK: SimApiReply = { status: 200, body: { data: { result: 'ok' } } };
const ALREADY_ENDED: SimApiReply = {
  status: 422,
  body: {
    errors: [{ code: '90018', title: 'Call has already ended', detail: 'This call is no longer active.' }],
  },
};
const ACTIONS = new Set([
  'answer',
  'hangup',
  'reject',
  'transfer',
  'speak',
  'playback_start',
  'streaming_start',
  'streaming_stop',
]);

function error(status: number, code: string, title: string): SimApiReply {
  return { status, body: { errors: [{ code, title }] } };
}

function field(body: unknown, key: string): unknown {
  return typeof body === 'object' && body !== null ? (body as Record<string, unknown>)[key] : undefined;
}

function action(req: SimApiRequest, call: SimCallRecord): void {
  const { body } = req;
  switch (req.params.action) {
    case 'answer': {
      call.state = 'answered';
      const url = field(body, 'stream_url');
      if (typeof url === 'string') call.streamUrl = url;
      return;
    }
    case 'streaming_start': {
      const url = field(body, 'stream_url');
      if (typeof url === 'string') call.streamUrl = url;
      return;
    }
    case 'speak': {
      const text = field(body, 'payload');
      if (typeof text === 'string') call.spoken.push(text);
      return;
    }
    case 'playback_start': {
      const url = field(body, 'audio_url');
      if (typeof url === 'string') call.spoken.push(`(the recording at ${url})`);
      return;
    }
    case 'transfer': {
      const to = field(body, 'to');
      // The caller's leg goes on, bridged to the target; only our stream of it ends.
      if (typeof to === 'string') call.transferredTo = to;
      return;
    }
    case 'hangup':
    case 'reject':
      call.state = 'ended';
      return;
  }
}

export const telnyxSimApi: SimCarrierApi = {
  carrier: 'telnyx',

  authenticate(req) {
    const header = req.headers.authorization;
    if (typeof header === 'string' && /^Bearer \S+$/.test(header)) return null;
    return error(401, '10009', 'Authentication failed');
  },

  routes: [
    {
      method: 'POST',
      path: '/v2/calls/:callSid/actions/:action',
      handle(req, { calls }) {
        const name = req.params.action!;
        if (!ACTIONS.has(name)) return error(404, '10005', 'Resource not found');
        const known = calls.get(req.params.callSid!);
        if (known?.state === 'ended' && name !== 'streaming_stop') {
          calls.record('telnyx', known.callSid, name, req.body);
          return ALREADY_ENDED;
        }
        calls.record('telnyx', req.params.callSid!, name, req.body, (call) => action(req, call));
        return OK;
      },
    },
    {
      // Recorded for the outbound side: the phone it calls learns of it from `GET /sim/calls`.
      method: 'POST',
      path: '/v2/calls',
      handle(req, { calls, newId }) {
        const callSid = `v3:sim-${newId()}`;
        calls.record('telnyx', callSid, 'create', req.body, (call) => {
          const url = field(req.body, 'stream_url');
          if (typeof url === 'string') call.streamUrl = url;
        });
        return {
          status: 200,
          body: {
            data: {
              call_control_id: callSid,
              call_leg_id: newId(),
              call_session_id: newId(),
              is_alive: false,
              record_type: 'call',
            },
          },
        };
      },
    },
    {
      method: 'GET',
      path: '/v2/calls/:callSid',
      handle(req, { calls }) {
        const call = calls.get(req.params.callSid!);
        if (call === undefined) return error(404, '10005', 'Resource not found');
        return {
          status: 200,
          body: {
            data: {
              record_type: 'call',
              call_control_id: call.callSid,
              is_alive: call.state === 'answered',
              call_duration: 0,
            },
          },
        };
      },
    },
  ],
};

// Telnyx's Call Control API as the simulated carrier answers it (docs/protocols/telnyx.md sections 8
// and 9): Bearer auth, call actions on `/v2/calls/{call_control_id}/actions/{action}`, outbound
// calls on `POST /v2/calls` (validated, then handed to the simulated callee, which rings and posts
// the call's webhooks), a call's status on `GET /v2/calls/{call_control_id}`. A command on a call
// that has ended gets Telnyx's 422 with code 90018. Refused fields get a 422 in Telnyx's error shape
// (`errors: [{code, title, detail, source: {pointer}}]`); the codes for them are illustrative.
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

const E164 = /^\+[1-9]\d{1,14}$/;
const AMD_MODES = new Set(['detect', 'detect_beep', 'detect_words', 'greeting_end', 'premium', 'disabled']);
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

function invalid(pointer: string, detail: string): SimApiReply {
  const code = '10015';
  return {
    status: 422,
    body: { errors: [{ code, title: 'Invalid parameter', detail, source: { pointer: `/${pointer}` } }] },
  };
}

function isUrl(value: unknown, protocols: readonly string[]): value is string {
  if (typeof value !== 'string') return false;
  try {
    return protocols.includes(new URL(value).protocol);
  } catch {
    return false;
  }
}

/** The create request's refusal, or null when Telnyx would place the call. */
function createProblem(body: unknown): SimApiReply | null {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    return invalid('', 'the body must be a JSON object');
  }
  const connection = field(body, 'connection_id');
  if (typeof connection !== 'string' || connection === '') {
    return invalid('connection_id', 'connection_id is required');
  }
  const to = field(body, 'to');
  if (typeof to !== 'string' || !(E164.test(to) || to.startsWith('sip:'))) {
    return invalid('to', 'to must be an E.164 number or a SIP URI');
  }
  const from = field(body, 'from');
  if (typeof from !== 'string' || !E164.test(from)) return invalid('from', 'from must be an E.164 number');
  // Telnyx falls back to the connection's webhook; the simulated connection has none.
  if (!isUrl(field(body, 'webhook_url'), ['http:', 'https:'])) {
    return invalid('webhook_url', 'webhook_url must be an http(s) URL');
  }
  const amd = field(body, 'answering_machine_detection');
  if (amd !== undefined && (typeof amd !== 'string' || !AMD_MODES.has(amd))) {
    return invalid(
      'answering_machine_detection',
      `answering_machine_detection must be one of ${[...AMD_MODES].join(', ')}`,
    );
  }
  const config = field(body, 'answering_machine_detection_config');
  if (config !== undefined && (typeof config !== 'object' || config === null || Array.isArray(config))) {
    return invalid(
      'answering_machine_detection_config',
      'answering_machine_detection_config must be an object',
    );
  }
  const clientState = field(body, 'client_state');
  if (clientState !== undefined && (typeof clientState !== 'string' || !BASE64.test(clientState))) {
    return invalid('client_state', 'client_state must be a base64 string');
  }
  const streamUrl = field(body, 'stream_url');
  if (streamUrl !== undefined && !isUrl(streamUrl, ['ws:', 'wss:'])) {
    return invalid('stream_url', 'stream_url must be a ws(s) URL');
  }
  const timeout = field(body, 'timeout_secs');
  if (timeout !== undefined && (typeof timeout !== 'number' || !Number.isInteger(timeout) || timeout < 1)) {
    return invalid('timeout_secs', 'timeout_secs must be a positive integer');
  }
  return null;
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
      // Handed to the simulated callee, which rings, answers or not, and posts the call's webhooks.
      method: 'POST',
      path: '/v2/calls',
      handle(req, { calls, newId, placed }) {
        const problem = createProblem(req.body);
        if (problem !== null) return problem;
        const callSid = `v3:sim-${newId()}`;
        calls.record('telnyx', callSid, 'create', req.body, (call) => {
          call.status = 'queued';
          const url = field(req.body, 'stream_url');
          if (typeof url === 'string') call.streamUrl = url;
        });
        const webhookUrl = field(req.body, 'webhook_url') as string;
        const amd = field(req.body, 'answering_machine_detection');
        const clientState = field(req.body, 'client_state');
        placed({
          carrier: 'telnyx',
          callSid,
          accountSid: field(req.body, 'connection_id') as string,
          to: field(req.body, 'to') as string,
          from: field(req.body, 'from') as string,
          answerUrl: webhookUrl,
          statusUrl: webhookUrl,
          amdUrl: amd !== undefined && amd !== 'disabled' ? webhookUrl : null,
          clientState: typeof clientState === 'string' ? clientState : null,
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
              // Ringing counts as alive; an ended call tells how long it lasted.
              is_alive: call.state !== 'ended',
              call_duration: call.durationS ?? 0,
            },
          },
        };
      },
    },
  ],
};

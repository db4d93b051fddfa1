// Vonage's Voice API as the simulated carrier answers it (docs/protocols/vonage.md sections 8 and
// 9): `POST /v1/calls` places a call (201, `started`) that the simulated callee then answers, or
// not; `GET /v1/calls/{uuid}` reads it; `PUT /v1/calls/{uuid}` hangs it up or transfers it. Errors
// are Vonage's problem JSON (`type`, `title`, `detail`, `invalid_parameters`).
//
// Every request must carry `Authorization: Bearer` with an application JWT of the right shape:
// RS256, claims `application_id`, `iat`, `exp` (not past) and `jti`. Its signature is not checked:
// the simulation stands in for Vonage only where the server has no application key, so it has no
// public key to check against.
import { randomUUID } from 'node:crypto';
import type { SimCallRecord } from '../call-log.js';
import { httpUrl, type SimApiReply, type SimApiRequest, type SimCarrierApi } from '../handler.js';

const ERRORS = 'https://developer.nexmo.com/api-errors';
const JWT_SHAPE = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/;
/** Vonage takes numbers as E.164 digits without the `+`. */
const NUMBER = /^[1-9]\d{6,14}$/;
const MODES = new Set(['default', 'detect', 'detect_beep']);
const BEHAVIORS = new Set(['continue', 'hangup']);

/** The common status words of the call log, as Vonage says them. */
const STATUS_WORDS: Readonly<Record<string, string>> = Object.freeze({
  queued: 'started',
  ringing: 'ringing',
  'in-progress': 'answered',
  completed: 'completed',
  busy: 'busy',
  'no-answer': 'timeout',
  failed: 'failed',
  canceled: 'cancelled',
});

function problem(
  status: number,
  kind: string,
  title: string,
  detail: string,
  extra: object = {},
): SimApiReply {
  return { status, body: { type: `${ERRORS}#${kind}`, title, detail, ...extra } };
}

function invalid(name: string, reason: string): SimApiReply {
  return problem(400, 'validation', 'Bad Request', 'The request failed due to validation errors', {
    invalid_parameters: [{ name, reason }],
  });
}

function decodePart(part: string): Record<string, unknown> | null {
  try {
    const value: unknown = JSON.parse(Buffer.from(part, 'base64url').toString('utf8'));
    return typeof value === 'object' && value !== null && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : null;
  } catch {
    return null;
  }
}

/** Why the bearer token is not an application JWT, or null when its shape is right. */
export function appTokenProblem(authorization: unknown, nowMs: number): string | null {
  if (typeof authorization !== 'string' || !authorization.startsWith('Bearer ')) return 'no bearer token';
  const token = authorization.slice(7).trim();
  if (token.length > 4096 || !JWT_SHAPE.test(token)) return 'the token is not a JWT';
  const [headerPart, payloadPart] = token.split('.') as [string, string];
  const header = decodePart(headerPart);
  const claims = decodePart(payloadPart);
  if (header?.alg !== 'RS256') return 'the token is not signed RS256';
  if (claims === null || typeof claims.application_id !== 'string' || claims.application_id === '') {
    return 'the token names no application_id';
  }
  if (typeof claims.iat !== 'number' || typeof claims.exp !== 'number') return 'the token lacks iat or exp';
  if (claims.exp * 1000 <= nowMs) return 'the token has expired';
  if (typeof claims.jti !== 'string' || claims.jti === '') return 'the token lacks a jti';
  return null;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A `[url]` array field: its one URL, undefined when absent, or the reply refusing it. */
function urlList(body: Record<string, unknown>, key: string): string | undefined | SimApiReply {
  const value = body[key];
  if (value === undefined) return undefined;
  if (!Array.isArray(value) || value.length !== 1 || !httpUrl(value[0])) {
    return invalid(key, 'must be an array holding one http(s) URL');
  }
  return value[0];
}

function phone(value: unknown, key: string): string | SimApiReply {
  const endpoint = Array.isArray(value) ? (value.length === 1 ? value[0] : undefined) : value;
  if (!isObject(endpoint) || endpoint.type !== 'phone') return invalid(key, 'must be a phone endpoint');
  if (typeof endpoint.number !== 'string' || !NUMBER.test(endpoint.number)) {
    return invalid(`${key}.number`, 'must be an E.164 number without the +');
  }
  return endpoint.number;
}

function machineDetectionProblem(value: unknown): SimApiReply | null {
  if (value === undefined) return null;
  if (!isObject(value)) return invalid('advanced_machine_detection', 'must be an object');
  if (!BEHAVIORS.has(value.behavior as string)) {
    return invalid('advanced_machine_detection.behavior', 'must be continue or hangup');
  }
  if (value.mode !== undefined && !MODES.has(value.mode as string)) {
    return invalid('advanced_machine_detection.mode', 'must be default, detect or detect_beep');
  }
  const beep = value.beep_timeout;
  if (beep !== undefined && !(Number.isInteger(beep) && (beep as number) >= 45 && (beep as number) <= 120)) {
    return invalid(
      'advanced_machine_detection.beep_timeout',
      'must be a whole number of seconds from 45 to 120',
    );
  }
  return null;
}

function resource(call: SimCallRecord): Record<string, unknown> {
  const status = call.status ?? (call.state === 'ended' ? 'completed' : 'in-progress');
  return {
    uuid: call.callSid,
    status: STATUS_WORDS[status] ?? 'started',
    direction: 'outbound',
    ...(call.durationS === undefined ? {} : { duration: String(call.durationS) }),
  };
}

const NOT_FOUND = problem(404, 'not-found', 'Not Found', 'Call does not exist, or you do not have access');

export const vonageSimApi: SimCarrierApi = {
  carrier: 'vonage',

  authenticate(req: SimApiRequest) {
    const why = appTokenProblem(req.headers.authorization, Date.now());
    return why === null ? null : problem(401, 'unauthorized', 'Unauthorized', why);
  },

  routes: [
    {
      method: 'POST',
      path: '/v1/calls',
      handle(req, { calls, placed }) {
        const { body } = req;
        if (!isObject(body))
          return problem(400, 'validation', 'Bad Request', 'the body must be a JSON object');
        const to = phone(body.to, 'to');
        if (typeof to !== 'string') return to;
        const from = phone(body.from, 'from');
        if (typeof from !== 'string') return from;
        const answerUrl = urlList(body, 'answer_url');
        if (typeof answerUrl === 'object') return answerUrl;
        if (answerUrl === undefined) {
          // The simulated callee plays only answered calls that fetch their NCCO.
          return invalid(
            'answer_url',
            body.ncco === undefined
              ? 'answer_url or ncco is required'
              : 'the simulation takes answer_url, not ncco',
          );
        }
        const eventUrl = urlList(body, 'event_url');
        if (typeof eventUrl === 'object') return eventUrl;
        const ringing = body.ringing_timer;
        if (
          ringing !== undefined &&
          !(Number.isInteger(ringing) && (ringing as number) >= 1 && (ringing as number) <= 120)
        ) {
          return invalid('ringing_timer', 'must be a whole number of seconds from 1 to 120');
        }
        const amdProblem = machineDetectionProblem(body.advanced_machine_detection);
        if (amdProblem !== null) return amdProblem;
        const uuid = randomUUID();
        const call = calls.record('vonage', uuid, 'create', body, (record) => {
          record.status = 'queued';
        });
        placed({
          carrier: 'vonage',
          callSid: uuid,
          accountSid: '',
          to: `+${to}`,
          from: `+${from}`,
          answerUrl,
          statusUrl: eventUrl ?? null,
          amdUrl: body.advanced_machine_detection !== undefined ? (eventUrl ?? null) : null,
        });
        return { status: 201, body: { ...resource(call), conversation_uuid: `CON-${randomUUID()}` } };
      },
    },
    {
      method: 'GET',
      path: '/v1/calls/:uuid',
      handle(req, { calls }) {
        const call = calls.get(req.params.uuid!);
        return call === undefined ? NOT_FOUND : { status: 200, body: resource(call) };
      },
    },
    {
      method: 'PUT',
      path: '/v1/calls/:uuid',
      handle(req, { calls }) {
        const known = calls.get(req.params.uuid!);
        const action = isObject(req.body) ? req.body.action : undefined;
        if (action === 'hangup') {
          if (known?.state === 'ended') return NOT_FOUND;
          calls.record('vonage', req.params.uuid!, 'hangup', req.body, (call) => {
            // Hanging up a call still ringing cancels it; an answered one completes.
            if (call.status !== undefined) call.status = call.state === 'ringing' ? 'canceled' : 'completed';
            call.state = 'ended';
          });
          return { status: 204 };
        }
        if (action === 'transfer') {
          if (known?.state === 'ended') return NOT_FOUND;
          const destination = isObject(req.body) ? req.body.destination : undefined;
          if (!isObject(destination) || destination.type !== 'ncco' || !Array.isArray(destination.ncco)) {
            return invalid('destination', 'must be {"type": "ncco", "ncco": [...]}');
          }
          const endpoint = (destination.ncco[0] as { endpoint?: Array<{ number?: unknown; uri?: unknown }> })
            ?.endpoint?.[0];
          const target = endpoint?.number ?? endpoint?.uri;
          calls.record('vonage', req.params.uuid!, 'transfer', req.body, (call) => {
            if (typeof target === 'string') call.transferredTo = target;
          });
          return { status: 204 };
        }
        return invalid('action', 'must be hangup or transfer');
      },
    },
  ],
};

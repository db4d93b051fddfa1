// Live calls for operators, whichever instance carries them (mounted inside the `/v1` admin scope,
// which checks each route's declared role; controls are audited):
//   GET  /calls?live=true                  → 200 {"calls": [...]}: every live call of the deployment
//   POST /calls/:callSid/hangup            → 200 {"callSid", "instance"}; 404 if no such live call
//   POST /calls/:callSid/transfer {"to"}   → 200 {"callSid", "instance", "to"}; 404, 409 refused, 503
import type { FastifyInstance } from 'fastify';
import type { ControlOutcome, LiveCalls } from '../call/watch/live-call.js';
import type { DialPolicy } from '../trust/dial-policy.js';
import { BadRequestError, ConflictError, NotFoundError, UnavailableError } from '../errors.js';
import { CallSidParams, ControlAnswer, errors, TransferBody } from './schemas.js';

export interface LiveCallAdminDeps {
  calls: LiveCalls;
  /** Transfer targets are dialed numbers: the dial policy applies (docs/security.md). */
  dialPolicy: DialPolicy;
}

const MAX_CALL_SID_CHARS = 128;
/** E.164, or a SIP URI: where a carrier can transfer a call. */
const TRANSFER_TARGET = /^(\+[1-9]\d{6,14}|sips?:[^\s<>"]{3,250})$/;

export function callSidOf(raw: string): string {
  if (raw.length === 0 || raw.length > MAX_CALL_SID_CHARS || !/^[\w.:-]+$/.test(raw)) {
    throw new BadRequestError('callSid is not a call id');
  }
  return raw;
}

export function settle(callSid: string, outcome: ControlOutcome): { callSid: string; instance: string } {
  if (outcome.ok) return { callSid, instance: outcome.instance };
  switch (outcome.reason) {
    case 'not_found':
      throw new NotFoundError(`no live call ${JSON.stringify(callSid)}`);
    case 'refused':
      throw new ConflictError(outcome.message);
    case 'unreachable':
      throw new UnavailableError(outcome.message);
  }
}

/** Whether `GET /calls` asks for live calls (`live=true`) rather than records. */
export function wantsLiveCalls(query: Record<string, unknown>): boolean {
  const live = query.live;
  if (live === undefined || live === 'false') return false;
  if (live === 'true') return true;
  throw new BadRequestError('live must be true or false');
}

export function registerLiveCallAdminRoutes(scope: FastifyInstance, deps: LiveCallAdminDeps): void {
  scope.post<{ Params: { callSid: string } }>(
    '/calls/:callSid/hangup',
    {
      config: { role: 'operator' },
      schema: {
        summary: 'Hang up a live call, whichever instance carries it',
        params: CallSidParams,
        response: { 200: ControlAnswer, ...errors(404, 409, 503) },
      },
    },
    async (request) => {
      const callSid = callSidOf(request.params.callSid);
      const answer = settle(callSid, await deps.calls.hangup(callSid));
      await request.audit('call.hangup', callSid, { instance: answer.instance });
      return answer;
    },
  );

  scope.post<{ Params: { callSid: string }; Body: unknown }>(
    '/calls/:callSid/transfer',
    {
      config: { role: 'operator' },
      schema: {
        summary: 'Transfer a live call to a number or SIP URI',
        params: CallSidParams,
        body: TransferBody,
        response: { 200: ControlAnswer, ...errors(404, 409, 503) },
      },
    },
    async (request) => {
      const callSid = callSidOf(request.params.callSid);
      const body = request.body as { to?: unknown } | null | undefined;
      const to = typeof body === 'object' && body !== null ? body.to : undefined;
      if (typeof to !== 'string' || !TRANSFER_TARGET.test(to)) {
        throw new BadRequestError('to must be an E.164 number (+15550100) or a sip: URI');
      }
      deps.dialPolicy.assert(to, 'to');
      const answer = { ...settle(callSid, await deps.calls.transfer(callSid, to)), to };
      await request.audit('call.transfer', callSid, { to, instance: answer.instance });
      return answer;
    },
  );
}

export async function listLiveCalls(deps: Pick<LiveCallAdminDeps, 'calls'>) {
  try {
    return { calls: await deps.calls.list() };
  } catch {
    throw new UnavailableError('the live-call directory cannot be read right now; retry later');
  }
}

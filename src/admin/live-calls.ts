// Live calls for operators, whichever instance carries them (mounted inside the `/v1` admin scope,
// which checks each route's declared role; controls are audited):
//   GET  /calls?live=true                  → 200 {"calls": [...]}: every live call of the deployment
//   POST /calls/:callSid/hangup            → 200 {"callSid", "instance"}; 404 if no such live call
//   POST /calls/:callSid/transfer {"to"}   → 200 {"callSid", "instance", "to"}; 404, 409 refused, 503
import type { FastifyInstance } from 'fastify';
import type { ControlOutcome, LiveCalls } from '../call/watch/live-call.js';
import type { DialPolicy } from '../trust/dial-policy.js';
import { BadRequestError, ConflictError, NotFoundError, UnavailableError } from '../errors.js';
import { routeSchema, typed } from './schemas.js';

export interface LiveCallAdminDeps {
  calls: LiveCalls;
  /** Transfer targets are dialed numbers: the dial policy applies (docs/security.md). */
  dialPolicy: DialPolicy;
}

const MAX_CALL_SID_CHARS = 128;
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

export function registerLiveCallAdminRoutes(scope: FastifyInstance, deps: LiveCallAdminDeps): void {
  const api = typed(scope);
  api.post(
    '/calls/:callSid/hangup',
    {
      config: { role: 'operator' },
      schema: routeSchema(
        '/v1/calls/{callSid}/hangup',
        'post',
        'Hang up a live call, whichever instance carries it',
        404,
        409,
        503,
      ),
    },
    async (request) => {
      const callSid = callSidOf(request.params.callSid);
      const answer = settle(callSid, await deps.calls.hangup(callSid));
      await request.audit('call.hangup', callSid, { instance: answer.instance });
      return answer;
    },
  );

  api.post(
    '/calls/:callSid/transfer',
    {
      config: { role: 'operator' },
      schema: routeSchema(
        '/v1/calls/{callSid}/transfer',
        'post',
        'Transfer a live call to a number or SIP URI',
        404,
        409,
        503,
      ),
    },
    async (request) => {
      const callSid = callSidOf(request.params.callSid);
      const { to } = request.body;
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

// The observer feed: `GET /calls/:callSid/events` streams a call's events (transcript lines,
// barge-ins, function calls, the end) as Server-Sent Events (docs/security.md). Its token is a
// capability: handed only with the answer to a verified voice webhook (`X-Callbridge-Observer`),
// bound to the carrier and the call, good for opening the feed until the call's stream is due or
// while the call is live, and dead once the call has ended. The admin token opens every call's
// feed. A feed ends with its call, and ends too when no call comes by the time its stream was due.
import { createHmac } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { bearerToken, constantTimeEqual } from '../../auth.js';
import { NotFoundError, UnauthorizedError } from '../../errors.js';
import type { CallEvent, CallEventFeed } from './events.js';

const VERSION = 'o1';
const CARRIER = /^[a-z0-9]{1,32}$/;
const MAX_OBSERVER_TOKEN_CHARS = 128;

function sign(secret: string, carrier: string, callSid: string, expiresAtMs: number): string {
  return createHmac('sha256', `observe:${secret}`)
    .update(`${carrier}\n${callSid}\n${expiresAtMs}`)
    .digest('base64url');
}

/** A token for one carrier's call, good for opening its feed until `ttlMs` from now or while the call is live. */
export function issueObserverToken(
  secret: string,
  call: { carrier: string; callSid: string },
  ttlMs: number,
  nowMs = Date.now(),
): string {
  const expiresAtMs = nowMs + ttlMs;
  return `${VERSION}.${call.carrier}.${expiresAtMs}.${sign(secret, call.carrier, call.callSid, expiresAtMs)}`;
}

export interface ObserverGrant {
  carrier: string;
  expiresAtMs: number;
}

/** The grant a token holds for `callSid`, or null when it is not one issued here for that call. */
export function readObserverToken(secret: string, token: string, callSid: string): ObserverGrant | null {
  if (token.length > MAX_OBSERVER_TOKEN_CHARS) return null;
  const parts = token.split('.');
  if (parts.length !== 4 || parts[0] !== VERSION) return null;
  const [, carrier = '', expires = '', mac = ''] = parts;
  if (!CARRIER.test(carrier) || !/^\d{1,15}$/.test(expires)) return null;
  const expiresAtMs = Number(expires);
  if (!constantTimeEqual(mac, sign(secret, carrier, callSid, expiresAtMs))) return null;
  return { carrier, expiresAtMs };
}

/** Where a call stands, as far as the whole deployment knows. */
export type CallStanding = 'live' | 'ended' | 'unknown';

export interface ObserverRoutesDeps {
  secret: string;
  adminToken: string | null;
  events: CallEventFeed;
  /** Whether the call (of `carrier`, or any carrier for an admin) is live anywhere, has ended, or neither yet. */
  standing(callSid: string, carrier: string | null): Promise<CallStanding>;
  /** How long an admin's feed of a call not live yet waits for it (a token's own expiry otherwise). */
  waitForCallMs: number;
  now?: () => number;
}

const HEARTBEAT_MS = 15_000;

export function observerRoutes(deps: ObserverRoutesDeps) {
  const now = deps.now ?? Date.now;
  /** Whether the call is known (live or ended) under a carrier other than `carrier`. */
  const foreign = async (callSid: string, carrier: string, mine: CallStanding): Promise<boolean> => {
    if (mine !== 'unknown') return false;
    return (await deps.standing(callSid, null)) !== 'unknown';
  };
  return async function plugin(app: FastifyInstance): Promise<void> {
    app.get<{ Params: { callSid: string } }>('/calls/:callSid/events', async (req, reply) => {
      const { callSid } = req.params;
      const bearer = bearerToken(req.headers.authorization);
      const admin = bearer !== null && deps.adminToken !== null && constantTimeEqual(bearer, deps.adminToken);
      const grant = bearer !== null && !admin ? readObserverToken(deps.secret, bearer, callSid) : null;
      if (!admin && grant === null) throw new UnauthorizedError('a bearer token for this call is required');
      const standing = await deps.standing(callSid, grant?.carrier ?? null);
      // A token is bound to its carrier's call: a call of that id carried by another carrier (one a
      // verified request of this carrier named) is not its call.
      if (grant !== null && (await foreign(callSid, grant.carrier, standing))) {
        throw new UnauthorizedError('this token is not for this call');
      }
      if (standing === 'ended') {
        if (admin) throw new NotFoundError('this call has ended: its record is at /v1/calls/:callSid');
        throw new UnauthorizedError('this token expired with its call');
      }
      // A token opens the feed of a call that is live, or whose stream is still due.
      if (grant !== null && standing !== 'live' && grant.expiresAtMs <= now()) {
        throw new UnauthorizedError('this token expired before its call started');
      }
      const waitUntilMs = grant?.expiresAtMs ?? now() + deps.waitForCallMs;

      reply.hijack();
      const res = reply.raw;
      // Events that come while the feed is being opened are held, then written in order.
      const held: CallEvent[] = [];
      let open = false;
      let heard = standing === 'live';
      // A feed opened before its call was known confirms, at the call's first event, that the call
      // is its carrier's; one that turns out to be another carrier's ends without a word of it.
      let confirmed: Promise<boolean> | null =
        grant === null || standing === 'live' ? Promise.resolve(true) : null;
      const write = (event: CallEvent) => {
        if (confirmed === null) {
          const carrier = grant!.carrier;
          confirmed = deps.standing(callSid, carrier).then(
            async (mine) => !(await foreign(callSid, carrier, mine)),
            () => false,
          );
          void confirmed.then((ok) => (ok ? undefined : res.end()));
        }
        void confirmed.then((ok) => (ok ? deliver(event) : undefined));
      };
      const deliver = (event: CallEvent) => {
        if (res.writableEnded) return;
        heard = true;
        if (!open) {
          held.push(event);
          return;
        }
        res.write(`data: ${JSON.stringify(event)}\n\n`);
        if (event.type === 'end') res.end();
      };
      const unsubscribe = deps.events.subscribe(callSid, write);
      const heartbeat = setInterval(() => {
        if (open) res.write(': keep-alive\n\n');
      }, HEARTBEAT_MS);
      heartbeat.unref();
      // A call that never comes ends its feed when its stream was due: a feed never outlives its call.
      const noCall = setTimeout(
        () => {
          if (!heard) res.end();
        },
        Math.max(0, waitUntilMs - now()),
      );
      noCall.unref();
      res.on('close', () => {
        clearInterval(heartbeat);
        clearTimeout(noCall);
        unsubscribe();
      });
      // The feed opens once events will reach it, wherever the call runs: nothing said after the
      // opening comment is missed.
      await deps.events.following?.(callSid).catch(() => {});
      if (res.destroyed) return;
      // A feed is quiet between events by design; the idle-connection timeout is for requests.
      req.raw.socket.setTimeout(0);
      res.writeHead(200, {
        'content-type': 'text/event-stream',
        'cache-control': 'no-store',
        connection: 'keep-alive',
      });
      res.write(': observing\n\n');
      open = true;
      for (const event of held.splice(0)) deliver(event);
    });
  };
}

// The observer feed: `GET /calls/:callSid/events` streams a call's events (transcript lines,
// barge-ins, function calls, the end) as Server-Sent Events. Its token is handed only to whoever
// placed the call, in the voice webhook answer's `X-Callbridge-Observer` header, and is bound to
// the CallSid. The admin token opens every call's feed.
import { createHmac } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { bearerToken, constantTimeEqual } from '../auth.js';
import { UnauthorizedError } from '../errors.js';
import type { CallEvent, CallEventFeed } from './events.js';

export function observerToken(secret: string, callSid: string): string {
  return createHmac('sha256', secret).update(`observe:${callSid}`).digest('base64url');
}

const HEARTBEAT_MS = 15_000;

export function observerRoutes(deps: { secret: string; adminToken: string | null; events: CallEventFeed }) {
  return async function plugin(app: FastifyInstance): Promise<void> {
    app.get<{ Params: { callSid: string } }>('/calls/:callSid/events', async (req, reply) => {
      const { callSid } = req.params;
      const bearer = bearerToken(req.headers.authorization);
      const allowed =
        bearer !== null &&
        (constantTimeEqual(bearer, observerToken(deps.secret, callSid)) ||
          (deps.adminToken !== null && constantTimeEqual(bearer, deps.adminToken)));
      if (!allowed) throw new UnauthorizedError('a bearer token for this call is required');

      reply.hijack();
      const res = reply.raw;
      // Events that come while the feed is being opened are held, then written in order.
      const held: CallEvent[] = [];
      let open = false;
      const write = (event: CallEvent) => {
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
      res.on('close', () => {
        clearInterval(heartbeat);
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
      for (const event of held.splice(0)) write(event);
    });
  };
}

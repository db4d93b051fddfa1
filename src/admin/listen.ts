// Listen-in (docs/console.md, "Listen"), operator role, audited as call.listen:
//   GET /calls/:callSid/listen  upgraded to a WebSocket: first a text message
//       {"type":"format","sampleRate":8000,"channels":2,"encoding":"pcm_s16le"}, then binary messages
//       of interleaved stereo PCM16 (left the caller, right what the caller heard), and a final
//       {"type":"end"} with close 1000 when the call ends. 404 before the upgrade for no live call.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { WebSocket } from 'ws';
import { ForbiddenError, NotFoundError } from '../errors.js';
import type { CallListening } from '../fleet/listen.js';
import { callSidOf } from './live-calls.js';
import { routeSchema, typed } from './schemas.js';

/** Audio a slow listener may fall behind by; past it frames are dropped, the call never waits. */
const MAX_BUFFERED_BYTES = 256 * 1024;

/**
 * A browser sends the cookie with a WebSocket handshake whatever page opened it; SameSite=Strict
 * keeps other sites' pages from it, and the Origin check makes sure.
 */
function sameOrigin(req: FastifyRequest): boolean {
  const origin = req.headers.origin;
  if (origin === undefined) return true;
  try {
    return new URL(origin).host === req.headers.host;
  } catch {
    return false;
  }
}

export function registerListenRoutes(scope: FastifyInstance, deps: { listening: CallListening }): void {
  typed(scope).get(
    '/calls/:callSid/listen',
    {
      websocket: true,
      config: { role: 'operator' },
      schema: routeSchema(
        '/v1/calls/{callSid}/listen',
        'get',
        "Both sides of a live call's audio as stereo PCM16 over a WebSocket",
        404,
      ),
      preHandler: async (req) => {
        const callSid = callSidOf(req.params.callSid);
        if (req.principal?.via === 'cookie' && !sameOrigin(req)) {
          throw new ForbiddenError('listen-in is only for pages of this origin');
        }
        if (!(await deps.listening.canListen(callSid))) {
          throw new NotFoundError(`no live call ${JSON.stringify(callSid)}`);
        }
        await req.audit('call.listen', callSid);
      },
    },
    async (socket: WebSocket, req) => {
      const callSid = callSidOf(req.params.callSid);
      let closed = false;
      const finish = () => {
        if (closed) return;
        closed = true;
        if (socket.readyState === socket.OPEN) {
          socket.send(JSON.stringify({ type: 'end' }));
          socket.close(1000, 'call ended');
        }
      };
      const listening = await deps.listening.listen(callSid, {
        audio: (pcm) => {
          if (!closed && socket.readyState === socket.OPEN && socket.bufferedAmount < MAX_BUFFERED_BYTES) {
            socket.send(pcm);
          }
        },
        end: finish,
      });
      if (!listening) return finish();
      socket.send(
        JSON.stringify({
          type: 'format',
          sampleRate: listening.sampleRate,
          channels: 2,
          encoding: 'pcm_s16le',
        }),
      );
      // Held to the credential that opened it: a deleted key or an ended session stops the audio.
      const release = req.streams?.hold(req.principal!, () => {
        if (closed) return;
        closed = true;
        listening.stop();
        if (socket.readyState === socket.OPEN) {
          socket.send(JSON.stringify({ type: 'end', reason: 'signed out' }));
          socket.close(1008, 'credential ended');
        }
      });
      socket.on('close', () => {
        closed = true;
        release?.();
        listening.stop();
      });
      // Nothing is read from the listener: anything it sends is ignored.
      socket.on('message', () => {});
    },
  );
}

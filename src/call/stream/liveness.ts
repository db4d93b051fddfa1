// Dead carrier sockets: a phone leg that vanished without a close (a NAT timeout, a crashed edge)
// would keep its call, its agent session and its timers forever. Every media socket is pinged on
// a fixed sweep; one that has not answered the previous ping is cut, which ends its call.
import type { FastifyInstance } from 'fastify';
import type WebSocket from 'ws';

const alive = new WeakSet<WebSocket>();

/** Called once per media socket when it opens. */
export function trackLiveness(socket: WebSocket): void {
  alive.add(socket);
  socket.on('pong', () => alive.add(socket));
}

export function startPingSweep(app: FastifyInstance, intervalMs: number): NodeJS.Timeout {
  const timer = setInterval(() => {
    for (const socket of app.websocketServer.clients) {
      if (!alive.has(socket)) {
        socket.terminate();
        continue;
      }
      alive.delete(socket);
      socket.ping();
    }
  }, intervalMs);
  timer.unref();
  return timer;
}

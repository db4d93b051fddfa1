// Server-sent events for the admin API's streams (https://html.spec.whatwg.org/multipage/server-sent-events.html):
// named events with JSON data, a comment every 15 s so proxies keep the connection, and a bound on
// what may wait for a slow reader: past it the stream ends and the console reconnects. Every stream
// is held to the credential that opened it (open-streams.ts) and ends when that credential lapses.
import type { FastifyReply, FastifyRequest } from 'fastify';

const HEARTBEAT_MS = 15_000;
/** Unsent bytes a reader may fall behind by before its stream is closed. */
const MAX_BUFFERED_BYTES = 1024 * 1024;

export interface EventStream {
  send(event: string, data: unknown): void;
  end(): void;
  /** Runs once when the stream ends, whoever ends it. */
  onClose(run: () => void): void;
  readonly closed: boolean;
}

export function openEventStream(req: FastifyRequest, reply: FastifyReply): EventStream {
  reply.hijack();
  const res = reply.raw;
  // A stream is quiet between events by design; the idle-connection timeout is for requests.
  req.raw.socket.setTimeout(0);
  res.writeHead(200, {
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-store',
    connection: 'keep-alive',
    'x-accel-buffering': 'no',
  });
  res.write(': open\n\n');
  const closers: Array<() => void> = [];
  let closed = false;
  const heartbeat = setInterval(() => res.write(': keep-alive\n\n'), HEARTBEAT_MS);
  heartbeat.unref();
  const finish = () => {
    if (closed) return;
    closed = true;
    clearInterval(heartbeat);
    for (const run of closers.splice(0)) run();
  };
  res.on('close', finish);
  if (req.streams && req.principal) {
    const release = req.streams.hold(req.principal, () => {
      if (closed) return;
      res.end();
      finish();
    });
    closers.push(release);
  }
  return {
    send(event, data) {
      if (closed) return;
      if (res.writableLength > MAX_BUFFERED_BYTES) {
        res.end();
        finish();
        return;
      }
      res.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
    },
    end() {
      if (closed) return;
      res.end();
      finish();
    },
    onClose(run) {
      if (closed) run();
      else closers.push(run);
    },
    get closed() {
      return closed;
    },
  };
}

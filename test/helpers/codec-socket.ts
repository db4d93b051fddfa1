// A media endpoint on an ephemeral loopback port that runs one carrier's codec per connection, the
// way the call core does: served at `/media/<carrier>/:instance/:token`, the adapter's upgrade check
// run first, every frame through `parse` and the events recorded, and the codec's serializers to
// answer with. Lets a carrier's stream, and its test helper, be proven over a real socket without
// the core.
import websocket from '@fastify/websocket';
import Fastify, { type FastifyInstance, type FastifyRequest } from 'fastify';
import WebSocket from 'ws';
import type { LegCodec, LegEvent } from '../../src/call/carrier-port.js';

export interface CodecConnection {
  /** The path the carrier opened (`/media/<carrier>/<instance>/<token>`). */
  path: string;
  /** The path's token segment, as the core reads it. */
  pathToken: string | undefined;
  headers: Record<string, string | string[] | undefined>;
  codec: LegCodec;
  events: LegEvent[];
  /** Frames the codec refused, by message. */
  errors: string[];
  send(frame: string | Buffer): void;
  waitFor(predicate: (event: LegEvent) => boolean): Promise<LegEvent>;
}

export interface CodecSocketServer {
  /** `ws://127.0.0.1:<port>`, no trailing slash. */
  url: string;
  nextConnection(): Promise<CodecConnection>;
  close(): Promise<void>;
}

export async function startCodecSocket(opts: {
  carrier: string;
  createCodec(): LegCodec;
  verifyUpgrade?(req: FastifyRequest): void;
}): Promise<CodecSocketServer> {
  const app: FastifyInstance = Fastify({ logger: false });
  await app.register(websocket, { options: { maxPayload: 64 * 1024 } });
  const pending: CodecConnection[] = [];
  const waiting: Array<(c: CodecConnection) => void> = [];
  app.get(
    `/media/${opts.carrier}/:instance/:token`,
    { websocket: true, preValidation: async (req) => opts.verifyUpgrade?.(req) },
    (socket, req) => {
      const listeners: Array<() => void> = [];
      const connection: CodecConnection = {
        path: req.url,
        pathToken: (req.params as { token?: string }).token,
        headers: req.headers,
        codec: opts.createCodec(),
        events: [],
        errors: [],
        send: (frame) => socket.send(frame, { binary: typeof frame !== 'string' }),
        waitFor: (predicate) =>
          new Promise((resolve, reject) => {
            const check = () => {
              const found = connection.events.find(predicate);
              if (found) resolve(found);
              else if (socket.readyState === WebSocket.CLOSED)
                reject(new Error('socket closed while waiting'));
              else listeners.push(check);
            };
            check();
          }),
      };
      socket.on('message', (data: Buffer, isBinary: boolean) => {
        try {
          const parsed = connection.codec.parse(data, isBinary);
          connection.events.push(...(Array.isArray(parsed) ? parsed : [parsed as LegEvent]));
        } catch (err) {
          connection.errors.push((err as Error).message);
        }
        for (const l of listeners.splice(0)) l();
      });
      socket.on('close', () => {
        for (const l of listeners.splice(0)) l();
      });
      const waiter = waiting.shift();
      if (waiter) waiter(connection);
      else pending.push(connection);
    },
  );
  await app.listen({ port: 0, host: '127.0.0.1' });
  const { port } = app.server.address() as { port: number };
  return {
    url: `ws://127.0.0.1:${port}`,
    nextConnection: () =>
      new Promise((resolve) => {
        const ready = pending.shift();
        if (ready) resolve(ready);
        else waiting.push(resolve);
      }),
    close: () => app.close(),
  };
}

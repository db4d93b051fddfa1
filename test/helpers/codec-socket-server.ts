// A media WebSocket that speaks through one carrier's codec and nothing else: each connection's
// frames are parsed and recorded, and the test sends through the codec. It stands in for the call
// core's media socket, so a carrier's codec and its test helper are proven over a real socket.
import websocket from '@fastify/websocket';
import Fastify, { type FastifyInstance, type FastifyRequest } from 'fastify';
import type WebSocket from 'ws';
import type { LegCodec, LegEvent } from '../../src/call/carrier-port.js';

export interface CodecConnection {
  /** The path token, as the core reads it. */
  pathToken: string | undefined;
  codec: LegCodec;
  socket: WebSocket;
  events: LegEvent[];
  /** Frames the codec refused, by message. */
  errors: string[];
  waitFor(predicate: (e: LegEvent) => boolean): Promise<LegEvent>;
}

export interface CodecSocketServer {
  /** ws:// base URL, no trailing slash. */
  wsBase: string;
  nextConnection(): Promise<CodecConnection>;
  close(): Promise<void>;
}

export async function startCodecSocketServer(opts: {
  carrier: string;
  createCodec(): LegCodec;
  verifyUpgrade?(req: FastifyRequest): void;
}): Promise<CodecSocketServer> {
  const app: FastifyInstance = Fastify({ logger: false });
  await app.register(websocket);
  const pending: CodecConnection[] = [];
  const waiting: Array<(c: CodecConnection) => void> = [];
  app.get(
    `/media/${opts.carrier}/:instance/:token`,
    { websocket: true, preValidation: async (req) => opts.verifyUpgrade?.(req) },
    (socket, req) => {
      const listeners: Array<() => void> = [];
      const connection: CodecConnection = {
        pathToken: (req.params as { token?: string }).token,
        codec: opts.createCodec(),
        socket,
        events: [],
        errors: [],
        waitFor: (predicate) =>
          new Promise((resolve) => {
            const check = () => {
              const found = connection.events.find(predicate);
              if (found) resolve(found);
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
      const waiter = waiting.shift();
      if (waiter) waiter(connection);
      else pending.push(connection);
    },
  );
  await app.listen({ port: 0, host: '127.0.0.1' });
  const { port } = app.server.address() as { port: number };
  return {
    wsBase: `ws://127.0.0.1:${port}`,
    nextConnection: () =>
      new Promise((resolve) => {
        const ready = pending.shift();
        if (ready) resolve(ready);
        else waiting.push(resolve);
      }),
    close: () => app.close(),
  };
}

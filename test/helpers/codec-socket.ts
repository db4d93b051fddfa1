// A media endpoint on an ephemeral loopback port that runs one carrier codec per connection, the
// way the call core does: every frame through `parse`, the events recorded, and the codec's
// serializers to answer with. Lets a carrier's stream be tested over a real socket before the core
// hosts it.
import type { AddressInfo } from 'node:net';
import WebSocket, { WebSocketServer } from 'ws';
import type { LegCodec, LegEvent } from '../../src/call/carrier-port.js';

export interface CodecConnection {
  /** The path the carrier opened (`/media/<carrier>/<instance>/<token>`). */
  path: string;
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
  connections: CodecConnection[];
  nextConnection(): Promise<CodecConnection>;
  close(): Promise<void>;
}

export async function startCodecSocket(createCodec: () => LegCodec): Promise<CodecSocketServer> {
  const server = new WebSocketServer({ host: '127.0.0.1', port: 0, maxPayload: 64 * 1024 });
  await new Promise<void>((resolve) => server.once('listening', () => resolve()));
  const connections: CodecConnection[] = [];
  const waiting: Array<(c: CodecConnection) => void> = [];
  server.on('connection', (ws: WebSocket, req) => {
    const listeners: Array<() => void> = [];
    const connection: CodecConnection = {
      path: req.url ?? '',
      headers: req.headers,
      codec: createCodec(),
      events: [],
      errors: [],
      send: (frame) => ws.send(frame),
      waitFor: (predicate) =>
        new Promise((resolve, reject) => {
          const check = () => {
            const found = connection.events.find(predicate);
            if (found) resolve(found);
            else if (ws.readyState === WebSocket.CLOSED) reject(new Error('socket closed while waiting'));
            else listeners.push(check);
          };
          check();
        }),
    };
    ws.on('message', (data: Buffer, isBinary) => {
      try {
        const result = connection.codec.parse(data, isBinary);
        for (const event of Array.isArray(result) ? result : [result as LegEvent])
          connection.events.push(event);
      } catch (err) {
        connection.errors.push((err as Error).message);
      }
      for (const l of listeners.splice(0)) l();
    });
    ws.on('close', () => {
      for (const l of listeners.splice(0)) l();
    });
    connections.push(connection);
    for (const w of waiting.splice(0)) w(connection);
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `ws://127.0.0.1:${port}`,
    connections,
    nextConnection: () =>
      new Promise((resolve) => {
        const open = connections[connections.length - 1];
        if (open) resolve(open);
        else waiting.push(resolve);
      }),
    close: () =>
      new Promise((resolve) => {
        for (const client of server.clients) client.terminate();
        server.close(() => resolve());
      }),
  };
}

// A stand-in for one callbridge instance behind the balancer: it names itself in every answer,
// over HTTP and over WebSocket, records what reached it, and answers /readyz as the test says.
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { WebSocketServer } from 'ws';

export interface SeenRequest {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  bodyBytes: number;
}

export interface FakeInstance {
  name: string;
  /** HOST:PORT, as the balancer's instance list takes it. */
  address: string;
  requests: SeenRequest[];
  /** The request paths of the WebSockets opened to it. */
  sockets: string[];
  setReady(ready: boolean): void;
  close(): Promise<void>;
}

/** Listens on `host` (loopback) and `port` (any free one unless given). */
export async function startFakeInstance(
  name: string,
  at: { host?: string; port?: number } = {},
): Promise<FakeInstance> {
  const requests: SeenRequest[] = [];
  const sockets: string[] = [];
  let ready = true;
  const server = createServer((req, res) => {
    let bodyBytes = 0;
    req.on('data', (chunk: Buffer) => {
      bodyBytes += chunk.length;
    });
    req.on('end', () => {
      if (req.url === '/readyz') {
        res.writeHead(ready ? 200 : 503, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ status: ready ? 'ready' : 'draining' }));
        return;
      }
      requests.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, bodyBytes });
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ instance: name, url: req.url, bodyBytes }));
    });
  });
  const wss = new WebSocketServer({ server, maxPayload: 64 * 1024 });
  wss.on('connection', (socket, req) => {
    sockets.push(req.url ?? '');
    socket.send(JSON.stringify({ instance: name, url: req.url }));
    socket.on('message', (data, isBinary) => socket.send(data, { binary: isBinary }));
  });
  const host = at.host ?? '127.0.0.1';
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(at.port ?? 0, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;
  return {
    name,
    address: `${host}:${port}`,
    requests,
    sockets,
    setReady(next) {
      ready = next;
    },
    async close() {
      for (const client of wss.clients) client.terminate();
      wss.close();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

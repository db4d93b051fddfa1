// A speech service REST host scripted by the test: each request is recorded, and answered by the
// next scripted reply for its path (or the path's standing reply). Real sockets on loopback.
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface RecordedRequest {
  method: string;
  path: string;
  query: URLSearchParams;
  headers: IncomingMessage['headers'];
  body: string;
}

export interface ScriptedReply {
  status: number;
  /** An object is sent as JSON; a Buffer or string as is. */
  body?: unknown;
  contentType?: string;
  /** Never answer (the client's timeout or abort is the subject). */
  hang?: boolean;
}

export interface FakeSpeech {
  url: string;
  requests: RecordedRequest[];
  /** Replies for `path`, used in order; after them, the standing reply. */
  script(path: string, ...replies: ScriptedReply[]): void;
  /** The reply for `path` once its script is used up. */
  always(path: string, reply: ScriptedReply): void;
  close(): Promise<void>;
}

export async function startFakeSpeech(): Promise<FakeSpeech> {
  const scripts = new Map<string, ScriptedReply[]>();
  const standing = new Map<string, ScriptedReply>();
  const requests: RecordedRequest[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const url = new URL(req.url ?? '/', 'http://localhost');
      requests.push({
        method: req.method ?? '',
        path: url.pathname,
        query: url.searchParams,
        headers: req.headers,
        body: Buffer.concat(chunks).toString('utf8'),
      });
      const reply = scripts.get(url.pathname)?.shift() ??
        standing.get(url.pathname) ?? { status: 404, body: { err_code: 'NOT_FOUND' } };
      if (reply.hang) return;
      const isRaw = Buffer.isBuffer(reply.body) || typeof reply.body === 'string';
      const body =
        reply.body === undefined ? '' : isRaw ? (reply.body as Buffer | string) : JSON.stringify(reply.body);
      res.writeHead(reply.status, {
        'content-type': reply.contentType ?? (isRaw ? 'application/octet-stream' : 'application/json'),
      });
      res.end(body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests,
    script: (path, ...replies) => scripts.set(path, [...(scripts.get(path) ?? []), ...replies]),
    always: (path, reply) => standing.set(path, reply),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

// A post to the operator gateway answers with the status once the answer was read, reuses one
// kept-alive connection for deliveries in turn, follows a redirect as fetch did, and gives up when
// no answer comes in time.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { postToOperator } from '../../src/webhooks/operator-post.js';

describe('posting to the operator gateway', () => {
  let server: Server | undefined;
  afterEach(async () => {
    server?.closeAllConnections();
    await new Promise((done) => server?.close(done));
    server = undefined;
  });

  async function serve(handler: (req: IncomingMessage, res: ServerResponse, body: string) => void) {
    server = createServer((req, res) => {
      let body = '';
      req.setEncoding('utf8').on('data', (chunk: string) => (body += chunk));
      req.on('end', () => handler(req, res, body));
    });
    await new Promise<void>((ready) => server!.listen(0, '127.0.0.1', ready));
    return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  }

  it('sends the body and headers and answers the status, on one kept-alive connection', async () => {
    const seen: Array<{ body: string; type: string | undefined; port: number | undefined }> = [];
    const base = await serve((req, res, body) => {
      seen.push({ body, type: req.headers['content-type'], port: req.socket.remotePort });
      res.writeHead(seen.length === 1 ? 200 : 409).end('{"ok":true}');
    });
    const headers = { 'content-type': 'application/json' };
    expect(await postToOperator(`${base}/events`, headers, '{"n":1}', 2_000)).toBe(200);
    expect(await postToOperator(`${base}/events`, headers, '{"n":2}', 2_000)).toBe(409);
    expect(seen.map((s) => [s.body, s.type])).toEqual([
      ['{"n":1}', 'application/json'],
      ['{"n":2}', 'application/json'],
    ]);
    expect(seen[1]!.port).toBe(seen[0]!.port);
  });

  it('follows a redirect with the same POST', async () => {
    const bodies: string[] = [];
    const base = await serve((req, res, body) => {
      if (req.url === '/old') return res.writeHead(307, { location: '/new' }).end();
      bodies.push(body);
      res.writeHead(204).end();
    });
    expect(await postToOperator(`${base}/old`, {}, 'payload', 2_000)).toBe(204);
    expect(bodies).toEqual(['payload']);
  });

  it('rejects when no answer arrives within the timeout', async () => {
    const base = await serve(() => {
      // Never answers.
    });
    const started = Date.now();
    await expect(postToOperator(`${base}/events`, {}, '{}', 150)).rejects.toThrow(/no answer within 150 ms/);
    expect(Date.now() - started).toBeLessThan(2_000);
  });
});

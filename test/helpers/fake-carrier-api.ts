// A carrier's REST API as a test double on an ephemeral port: records every request and answers
// as the test scripts it (a status and JSON body, a delay, or no answer at all).
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface FakeApiRequest {
  method: string;
  path: string;
  authorization: string | undefined;
  contentType: string | undefined;
  body: string;
}

export type FakeApiAnswer = { status: number; body?: unknown; delayMs?: number } | 'hang';
export type FakeApiResponder = (req: FakeApiRequest) => FakeApiAnswer;

export interface FakeCarrierApi {
  url: string;
  requests: FakeApiRequest[];
  /** Replaces how the API answers from now on. */
  respond(responder: FakeApiResponder): void;
  /** Resolves with the first request matching `predicate`, at once if it already arrived. */
  waitFor(predicate: (r: FakeApiRequest) => boolean): Promise<FakeApiRequest>;
  close(): Promise<void>;
}

export async function startFakeCarrierApi(responder: FakeApiResponder): Promise<FakeCarrierApi> {
  const requests: FakeApiRequest[] = [];
  const listeners: Array<() => void> = [];
  let current = responder;
  const timers = new Set<NodeJS.Timeout>();
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const recorded: FakeApiRequest = {
        method: req.method ?? '',
        path: req.url ?? '',
        authorization: req.headers.authorization,
        contentType: req.headers['content-type'],
        body: Buffer.concat(chunks).toString('utf8'),
      };
      requests.push(recorded);
      for (const l of listeners.splice(0)) l();
      const answer = current(recorded);
      if (answer === 'hang') return;
      const send = () => {
        if (answer.body === undefined) {
          res.writeHead(answer.status).end();
          return;
        }
        res.writeHead(answer.status, { 'content-type': 'application/json' });
        res.end(typeof answer.body === 'string' ? answer.body : JSON.stringify(answer.body));
      };
      if (answer.delayMs === undefined) send();
      else {
        const timer = setTimeout(() => {
          timers.delete(timer);
          send();
        }, answer.delayMs);
        timers.add(timer);
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    respond: (next) => {
      current = next;
    },
    waitFor: (predicate) =>
      new Promise((resolve) => {
        const check = () => {
          const found = requests.find(predicate);
          if (found) resolve(found);
          else listeners.push(check);
        };
        check();
      }),
    close: () =>
      new Promise((resolve) => {
        for (const timer of timers) clearTimeout(timer);
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

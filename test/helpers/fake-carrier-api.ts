// A carrier REST API as a test double on an ephemeral loopback port: records every request and
// answers with whatever the test's responder says (default: 200 `{}`).
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface RecordedApiRequest {
  method: string;
  path: string;
  headers: IncomingMessage['headers'];
  body: string;
  /** The body read as JSON, or undefined. */
  json: unknown;
  /** The body read as a form. */
  form: Record<string, string>;
}

export type ApiResponder = (req: RecordedApiRequest, res: ServerResponse) => void;

export interface FakeCarrierApi {
  url: string;
  requests: RecordedApiRequest[];
  /** Replaces the responder for requests from now on. */
  respond(responder: ApiResponder): void;
  waitFor(predicate: (r: RecordedApiRequest) => boolean): Promise<RecordedApiRequest>;
  close(): Promise<void>;
}

export function jsonReply(status: number, body?: unknown): ApiResponder {
  return (_req, res) => {
    if (body === undefined) {
      res.writeHead(status);
      res.end();
      return;
    }
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(JSON.stringify(body));
  };
}

/** Never answers: for timeouts. */
export const silent: ApiResponder = () => {};

export async function startFakeCarrierApi(
  responder: ApiResponder = jsonReply(200, {}),
): Promise<FakeCarrierApi> {
  let current = responder;
  const requests: RecordedApiRequest[] = [];
  const listeners: Array<() => void> = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      let json: unknown;
      try {
        json = body === '' ? undefined : JSON.parse(body);
      } catch {
        json = undefined;
      }
      const recorded: RecordedApiRequest = {
        method: req.method ?? '',
        path: req.url ?? '',
        headers: req.headers,
        body,
        json,
        form: Object.fromEntries(new URLSearchParams(body)),
      };
      requests.push(recorded);
      for (const listener of listeners.splice(0)) listener();
      current(recorded, res);
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
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

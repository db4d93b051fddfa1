// Twilio's REST API as a test double: records each request (TWILIO_API_URL points here); a created
// call gets a fresh sid, and a call asked about is `in-progress`.
import { createServer, type Server } from 'node:http';

export interface ApiRequest {
  method: string;
  path: string;
  authorization: string | undefined;
  form: Record<string, string>;
}

export interface FakeTwilioApi {
  url: string;
  requests: ApiRequest[];
  /** Resolves with the first request matching `predicate`, at once if it already arrived. */
  waitFor(predicate: (r: ApiRequest) => boolean): Promise<ApiRequest>;
  close(): Promise<void>;
}

export async function startFakeTwilioApi(): Promise<FakeTwilioApi> {
  const requests: ApiRequest[] = [];
  const listeners: Array<() => void> = [];
  let created = 0;
  const server: Server = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => {
      body += c.toString();
    });
    req.on('end', () => {
      requests.push({
        method: req.method ?? '',
        path: req.url ?? '',
        authorization: req.headers.authorization,
        form: Object.fromEntries(new URLSearchParams(body)),
      });
      for (const l of listeners.splice(0)) l();
      const create = req.method === 'POST' && (req.url ?? '').endsWith('/Calls.json');
      const sid = create ? `CA${String(++created).padStart(32, '0')}` : 'CA0';
      res.writeHead(create ? 201 : 200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ sid, status: create ? 'queued' : 'in-progress' }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
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

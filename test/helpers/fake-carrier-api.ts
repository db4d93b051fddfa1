// A carrier's REST API as a test double, on an ephemeral loopback port: it records every request,
// reads each (through the carrier's fixture) as the call control it asks for, answers as the
// carrier would, and can be scripted to fail. The carrier's *_API_URL points here.
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';

export interface RecordedRequest {
  method: string;
  /** Path and query as requested. */
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
}

/** What a request asks of a live call, in the carrier's terms made common. */
export interface ControlRequest {
  kind: 'hangup' | 'transfer';
  callSid: string;
  /** Transfers: the number or SIP address dialed. */
  target?: string;
  request: RecordedRequest;
}

export interface ApiReply {
  status: number;
  body?: string;
  contentType?: string;
}

export interface CarrierApiBehaviour {
  /** The call control a request asks for, or null for anything else (reads, outbound calls). */
  classify(request: RecordedRequest): Omit<ControlRequest, 'request'> | null;
  /** The carrier's answer to a request it accepts. */
  reply(request: RecordedRequest): ApiReply;
}

export interface FakeCarrierApi {
  url: string;
  requests: RecordedRequest[];
  /** Every call-control request so far, in order. */
  control(): ControlRequest[];
  /** Resolves with the first control request of `kind` (for `callSid` when given), at once if it came. */
  waitForControl(kind: ControlRequest['kind'], callSid?: string): Promise<ControlRequest>;
  /** The next `count` requests are answered with `status` and an empty JSON body, as a failing carrier would. */
  failNext(status: number, count?: number): void;
  close(): Promise<void>;
}

export async function startFakeCarrierApi(behaviour: CarrierApiBehaviour): Promise<FakeCarrierApi> {
  const requests: RecordedRequest[] = [];
  const controls: ControlRequest[] = [];
  const listeners: Array<() => void> = [];
  let failures: { status: number; left: number } | null = null;
  const server: Server = createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (chunk: string) => {
      body += chunk;
    });
    req.on('end', () => {
      const request: RecordedRequest = {
        method: req.method ?? '',
        path: req.url ?? '',
        headers: req.headers,
        body,
      };
      requests.push(request);
      const control = behaviour.classify(request);
      if (control) controls.push({ ...control, request });
      for (const listener of listeners.splice(0)) listener();
      if (failures !== null && failures.left > 0) {
        failures.left -= 1;
        res.writeHead(failures.status, { 'content-type': 'application/json' });
        res.end('{}');
        return;
      }
      const reply = behaviour.reply(request);
      res.writeHead(reply.status, { 'content-type': reply.contentType ?? 'application/json' });
      res.end(reply.body ?? '');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    control: () => [...controls],
    waitForControl: (kind, callSid) =>
      new Promise((resolve) => {
        const check = () => {
          const found = controls.find(
            (c) => c.kind === kind && (callSid === undefined || c.callSid === callSid),
          );
          if (found) resolve(found);
          else listeners.push(check);
        };
        check();
      }),
    failNext: (status, count = 1) => {
      failures = { status, left: count };
    },
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

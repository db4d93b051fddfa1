// A stand-in for the callbridge server as the simulated carrier meets it: the voice webhook (checking
// Twilio's signature), the media stream socket, and the observer feed. Test scripts play the server.
import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import twilio from 'twilio';
import { type WebSocket, WebSocketServer } from 'ws';

export const AUTH_TOKEN = 'test-auth-token-0123456789abcdef';
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- wire messages are read loosely by the assertions.
export type Message = Record<string, any>;

/** The server side of one media stream, as the fake server sees it. */
export class ServerSide {
  readonly messages: Message[] = [];
  private waiters: Array<() => void> = [];
  readonly closed: Promise<{ code: number; reason: string }>;

  constructor(readonly ws: WebSocket) {
    ws.on('message', (data) => {
      this.messages.push(JSON.parse(data.toString()) as Message);
      for (const wake of this.waiters.splice(0)) wake();
    });
    this.closed = once(ws, 'close').then(([code, reason]) => ({ code, reason: String(reason) }));
  }

  async next(predicate: (m: Message) => boolean): Promise<Message> {
    for (;;) {
      const found = this.messages.find(predicate);
      if (found !== undefined) return found;
      await new Promise<void>((wake) => this.waiters.push(wake));
    }
  }

  mark(name: string): Promise<Message> {
    return this.next((m) => m.event === 'mark' && m.mark?.name === name);
  }

  streamSid(): string {
    return this.messages.find((m) => m.event === 'start')?.streamSid;
  }

  send(message: Message): void {
    this.ws.send(JSON.stringify({ streamSid: this.streamSid(), ...message }));
  }

  play(audio: Buffer, markName: string): void {
    this.send({ event: 'media', media: { payload: audio.toString('base64') } });
    this.send({ event: 'mark', mark: { name: markName } });
  }
}

export interface FakeServerOptions {
  /** TwiML for the voice webhook; `wsUrl` is the fake server's media URL. */
  twiml?: (wsUrl: string) => string;
  observerToken?: string;
  /** Accept unsigned requests, as a server without TWILIO_AUTH_TOKEN does. */
  unverified?: boolean;
  onStream?: (side: ServerSide) => Promise<void>;
}

export interface FakeServer {
  url: string;
  webhooks: Array<{ params: Record<string, string>; signed: boolean; signatureValid: boolean }>;
  upgrades: Array<{ path: string; signatureValid: boolean }>;
  streams: ServerSide[];
  streamDone: Promise<void>;
  publish(event: Message): void;
  close(): Promise<void>;
}

const open: FakeServer[] = [];

/** Closes every fake server opened so far: call it from `afterEach`. */
export async function closeFakeServers(): Promise<void> {
  await Promise.all(open.splice(0).map((server) => server.close()));
}

/** Forgets the servers a test has already closed itself. */
export function forgetFakeServers(): void {
  open.splice(0);
}

/** A stand-in for the callbridge server: voice webhook, media stream and observer feed. */
export async function fakeServer(opts: FakeServerOptions = {}): Promise<FakeServer> {
  const http: Server = createServer();
  const wss = new WebSocketServer({ noServer: true });
  const feeds: ServerResponse[] = [];
  let resolveStreamDone: () => void = () => {};
  const server: FakeServer = {
    url: '',
    webhooks: [],
    upgrades: [],
    streams: [],
    streamDone: new Promise<void>((resolve) => {
      resolveStreamDone = resolve;
    }),
    publish(event) {
      for (const res of feeds) res.write(`data: ${JSON.stringify(event)}\n\n`);
    },
    async close() {
      for (const res of feeds) res.end();
      for (const client of wss.clients) client.terminate();
      wss.close();
      http.closeAllConnections();
      await new Promise((resolve) => http.close(resolve));
    },
  };

  http.on('request', async (req: IncomingMessage, res: ServerResponse) => {
    if (req.method === 'POST' && req.url === '/carriers/twilio/voice') {
      let body = '';
      for await (const chunk of req) body += chunk;
      const params = Object.fromEntries(new URLSearchParams(body));
      const signature = req.headers['x-twilio-signature'] as string | undefined;
      const signatureValid = twilio.validateRequest(
        AUTH_TOKEN,
        signature ?? '',
        `${server.url}${req.url}`,
        params,
      );
      server.webhooks.push({ params, signed: signature !== undefined, signatureValid });
      if (!signatureValid && !opts.unverified) {
        res.writeHead(403, { 'content-type': 'application/json' });
        res.end(
          JSON.stringify({ error: { code: 'CALLBRIDGE_BAD_SIGNATURE', message: 'signature mismatch' } }),
        );
        return;
      }
      const headers: Record<string, string> = { 'content-type': 'text/xml' };
      if (opts.observerToken !== undefined) headers['x-callbridge-observer'] = opts.observerToken;
      res.writeHead(200, headers);
      const wsUrl = `${server.url.replace('http:', 'ws:')}/media/twilio`;
      res.end(
        opts.twiml?.(wsUrl) ??
          `<?xml version="1.0" encoding="UTF-8"?><Response><Connect><Stream url="${wsUrl}">` +
            '<Parameter name="token" value="a&amp;b"/><Parameter name="profile" value="orders"/>' +
            '</Stream></Connect></Response>',
      );
      return;
    }
    const feed = /^\/calls\/(CA[0-9a-f]{32})\/events$/.exec(req.url ?? '');
    if (req.method === 'GET' && feed !== null) {
      if (opts.observerToken === undefined || req.headers.authorization !== `Bearer ${opts.observerToken}`) {
        res.writeHead(opts.observerToken === undefined ? 404 : 401).end();
        return;
      }
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
      res.write(': connected\n\n');
      feeds.push(res);
      return;
    }
    res.writeHead(404).end();
  });

  http.on('upgrade', (req, socket, head) => {
    const path = req.url ?? '';
    const signature = req.headers['x-twilio-signature'] as string | undefined;
    const wsUrl = `${server.url.replace('http:', 'ws:')}${path}`;
    server.upgrades.push({
      path,
      signatureValid: twilio.validateRequest(AUTH_TOKEN, signature ?? '', wsUrl, {}),
    });
    wss.handleUpgrade(req, socket, head, (ws) => {
      const side = new ServerSide(ws);
      server.streams.push(side);
      (opts.onStream ?? (async () => {}))(side).then(resolveStreamDone, (err: unknown) => {
        ws.close(1011, 'test script failed');
        throw err;
      });
    });
  });

  http.listen(0, '127.0.0.1');
  await once(http, 'listening');
  server.url = `http://127.0.0.1:${(http.address() as AddressInfo).port}`;
  open.push(server);
  return server;
}

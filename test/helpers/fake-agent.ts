// A voice agent server scripted by the test: it records what the bridge sends and lets the test
// decide every message it answers with. Real sockets on an ephemeral loopback port.
import type { IncomingMessage } from 'node:http';
import { type WebSocket, WebSocketServer } from 'ws';

export interface AgentConnection {
  socket: WebSocket;
  headers: IncomingMessage['headers'];
  path: string;
  /** Text frames received, parsed. */
  messages: Array<Record<string, unknown>>;
  /** Binary frames received, in order. */
  audio: Buffer[];
  /** Everything received in arrival order, to check what came before `SettingsApplied`. */
  log: Array<{ kind: 'text'; message: Record<string, unknown> } | { kind: 'audio'; bytes: number }>;
  send(message: Record<string, unknown>): void;
  sendAudio(chunk: Buffer): void;
  audioBytes(): Buffer;
  /** Resolves when a text message of `type` has arrived (at once if it already has). */
  waitFor(type: string): Promise<Record<string, unknown>>;
  /** Resolves once at least `bytes` of audio have arrived. */
  waitForAudio(bytes: number): Promise<Buffer>;
  closed: Promise<{ code: number }>;
}

export interface FakeAgent {
  url: string;
  connections: AgentConnection[];
  nextConnection(): Promise<AgentConnection>;
  /** Answers the next handshakes with this HTTP status instead of upgrading. */
  refuseWith(status: number | null): void;
  close(): Promise<void>;
}

export async function startFakeAgent(
  opts: { autoWelcome?: boolean; autoApply?: boolean; onConnect?: (conn: AgentConnection) => void } = {},
): Promise<FakeAgent> {
  const { autoWelcome = true, autoApply = false, onConnect } = opts;
  const wss = new WebSocketServer({ host: '127.0.0.1', port: 0 });
  await new Promise<void>((resolve) => wss.once('listening', () => resolve()));
  const connections: AgentConnection[] = [];
  const waiting: Array<(c: AgentConnection) => void> = [];
  let refuseStatus: number | null = null;
  // Connections handed to the test by nextConnection(), in order.
  let handed = 0;

  const originalHandleUpgrade = wss.handleUpgrade.bind(wss);
  wss.handleUpgrade = (req, socket, head, cb) => {
    if (refuseStatus !== null) {
      socket.write(`HTTP/1.1 ${refuseStatus} Refused\r\nConnection: close\r\nContent-Length: 0\r\n\r\n`);
      socket.destroy();
      return;
    }
    originalHandleUpgrade(req, socket, head, cb);
  };

  wss.on('connection', (socket, req) => {
    const listeners: Array<() => void> = [];
    const notify = () => {
      for (const l of listeners.splice(0)) l();
    };
    let closeResolve: (v: { code: number }) => void = () => {};
    const conn: AgentConnection = {
      socket,
      headers: req.headers,
      path: req.url ?? '',
      messages: [],
      audio: [],
      log: [],
      send: (message) => socket.send(JSON.stringify(message)),
      sendAudio: (chunk) => socket.send(chunk, { binary: true }),
      audioBytes: () => Buffer.concat(conn.audio),
      waitFor: (type) =>
        new Promise((resolve) => {
          const check = () => {
            const found = conn.messages.find((m) => m.type === type);
            if (found) resolve(found);
            else listeners.push(check);
          };
          check();
        }),
      waitForAudio: (bytes) =>
        new Promise((resolve) => {
          const check = () => {
            const all = conn.audioBytes();
            if (all.length >= bytes) resolve(all);
            else listeners.push(check);
          };
          check();
        }),
      closed: new Promise((resolve) => {
        closeResolve = resolve;
      }),
    };
    socket.on('message', (data: Buffer, isBinary) => {
      if (isBinary) {
        conn.audio.push(Buffer.from(data));
        conn.log.push({ kind: 'audio', bytes: data.length });
      } else {
        const message = JSON.parse(data.toString('utf8')) as Record<string, unknown>;
        conn.messages.push(message);
        conn.log.push({ kind: 'text', message });
        if (autoApply && message.type === 'Settings') conn.send({ type: 'SettingsApplied' });
      }
      notify();
    });
    socket.on('close', (code) => closeResolve({ code }));
    if (autoWelcome) conn.send({ type: 'Welcome', request_id: `req-${connections.length + 1}` });
    onConnect?.(conn);
    connections.push(conn);
    const waiter = waiting.shift();
    if (waiter) waiter(conn);
  });

  const port = (wss.address() as { port: number }).port;
  return {
    url: `ws://127.0.0.1:${port}`,
    connections,
    nextConnection: () => {
      const index = handed++;
      const ready = connections[index];
      if (ready) return Promise.resolve(ready);
      return new Promise((resolve) => waiting.push(resolve));
    },
    refuseWith: (status) => {
      refuseStatus = status;
    },
    close: () =>
      new Promise((resolve) => {
        for (const client of wss.clients) client.terminate();
        wss.close(() => resolve());
      }),
  };
}

// What every simulated carrier's media client needs from its socket, in one place: when it opened
// (or why not), when it closed and how, and waiting for what the server sent. A client records each
// message its own way, then calls `notify` so waiters look again.
import WebSocket from 'ws';

export interface SocketWatch {
  /** Resolves once the socket is open; rejects on an error or a refused upgrade. */
  opened: Promise<void>;
  closed: Promise<{ code: number; reason: string }>;
  /** Wakes every waiter: call once a message has been recorded. */
  notify(): void;
  /** The first value `probe` yields, looked for now and at each notify; rejects once the socket closed. */
  waitUntil<T>(probe: () => T | undefined): Promise<T>;
}

export function watchSocket(ws: WebSocket): SocketWatch {
  const listeners: Array<() => void> = [];
  const notify = () => {
    for (const listener of listeners.splice(0)) listener();
  };
  const closed = new Promise<{ code: number; reason: string }>((resolve) => {
    ws.on('close', (code, reason) => {
      resolve({ code, reason: reason.toString() });
      notify();
    });
  });
  const opened = new Promise<void>((resolve, reject) => {
    ws.once('open', () => resolve());
    ws.once('error', reject);
    ws.once('unexpected-response', (_req, res) => {
      res.resume();
      reject(new Error(`upgrade refused: HTTP ${res.statusCode}`));
    });
  });
  return {
    opened,
    closed,
    notify,
    waitUntil: (probe) =>
      new Promise((resolve, reject) => {
        const check = () => {
          const found = probe();
          if (found !== undefined) resolve(found);
          else if (ws.readyState === WebSocket.CLOSED) reject(new Error('media stream closed while waiting'));
          else listeners.push(check);
        };
        check();
      }),
  };
}

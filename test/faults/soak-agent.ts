// A scripted voice agent for many short calls: it answers the handshake (Welcome, SettingsApplied),
// hands each connection to the test under its call's CallSid, and forgets it once closed, so a
// soak's heap measures the server, not this fake. Real sockets on an ephemeral loopback port.
import { type WebSocket, WebSocketServer } from 'ws';

export interface SoakAgentCall {
  socket: WebSocket;
  /** Caller audio received so far, concatenated on demand. */
  audio(): Buffer;
  waitForAudio(bytes: number): Promise<Buffer>;
  /** Resolves with the first text message of `type`. */
  waitFor(type: string): Promise<Record<string, unknown>>;
  closed: Promise<void>;
}

export interface SoakAgent {
  url: string;
  /** The connection of the call with this CallSid, once its Settings arrived. */
  callFor(callSid: string): Promise<SoakAgentCall>;
  opened(): number;
  closed(): number;
  /** Connections open now. */
  open(): number;
  close(): Promise<void>;
}

export async function startSoakAgent(): Promise<SoakAgent> {
  const wss = new WebSocketServer({ host: '127.0.0.1', port: 0 });
  await new Promise<void>((resolve) => wss.once('listening', () => resolve()));
  const calls = new Map<string, SoakAgentCall>();
  const waiting = new Map<string, (call: SoakAgentCall) => void>();
  let opened = 0;
  let closed = 0;

  wss.on('connection', (socket) => {
    opened += 1;
    const chunks: Buffer[] = [];
    let received = 0;
    const listeners = new Set<() => void>();
    /** Runs `check` now and after each message until it returns true. */
    const until = (check: () => boolean) => {
      const listener = () => {
        if (!check()) listeners.add(listener);
      };
      listener();
    };
    const messages: Array<Record<string, unknown>> = [];
    let callSid: string | undefined;
    let onClosed: () => void = () => {};
    const call: SoakAgentCall = {
      socket,
      audio: () => Buffer.concat(chunks),
      waitForAudio: (bytes) =>
        new Promise((resolve) => {
          until(() => {
            if (received < bytes) return false;
            resolve(call.audio());
            return true;
          });
        }),
      waitFor: (type) =>
        new Promise((resolve) => {
          until(() => {
            const found = messages.find((m) => m.type === type);
            if (found) resolve(found);
            return found !== undefined;
          });
        }),
      closed: new Promise((resolve) => {
        onClosed = resolve;
      }),
    };
    const notify = () => {
      for (const listener of [...listeners]) {
        listeners.delete(listener);
        listener();
      }
    };
    socket.on('message', (data: Buffer, isBinary) => {
      if (isBinary) {
        chunks.push(Buffer.from(data));
        received += data.length;
        notify();
        return;
      }
      const message = JSON.parse(data.toString('utf8')) as Record<string, unknown>;
      messages.push(message);
      if (message.type === 'Settings') {
        socket.send(JSON.stringify({ type: 'SettingsApplied' }));
        const tag = (message.tags as string[] | undefined)?.find((t) => t.startsWith('call:'));
        callSid = tag?.slice('call:'.length);
        if (callSid !== undefined) {
          calls.set(callSid, call);
          waiting.get(callSid)?.(call);
          waiting.delete(callSid);
        }
      }
      notify();
    });
    socket.on('close', () => {
      closed += 1;
      if (callSid !== undefined && calls.get(callSid) === call) calls.delete(callSid);
      listeners.clear();
      onClosed();
    });
    socket.send(JSON.stringify({ type: 'Welcome', request_id: `soak-${opened}` }));
  });

  const port = (wss.address() as { port: number }).port;
  return {
    url: `ws://127.0.0.1:${port}`,
    callFor: (callSid) => {
      const ready = calls.get(callSid);
      if (ready) return Promise.resolve(ready);
      return new Promise((resolve) => waiting.set(callSid, resolve));
    },
    opened: () => opened,
    closed: () => closed,
    open: () => wss.clients.size,
    close: () =>
      new Promise((resolve) => {
        for (const client of wss.clients) client.terminate();
        wss.close(() => resolve());
      }),
  };
}

// Opens the agent WebSocket. Settles exactly once: open, refused handshake, network error or
// timeout; a socket that loses the race is torn down so nothing is left open.
import WebSocket from 'ws';
import { AgentConnectError, retryableStatus } from '../errors.js';

export interface AgentSocketOptions {
  url: string;
  authorization: string;
  connectTimeoutMs: number;
  maxPayloadBytes: number;
}

function refusal(status: number): AgentConnectError {
  // docs/protocols/agent.md section 12: 429 means too many simultaneous connections; it clears as calls end.
  if (status === 429) {
    return new AgentConnectError('agent refused the connection: too many concurrent sessions', {
      code: 'CALLBRIDGE_AGENT_REFUSED',
      retryable: true,
      status,
    });
  }
  if (status === 401 || status === 403) {
    return new AgentConnectError(`agent rejected the credentials (HTTP ${status})`, {
      code: 'CALLBRIDGE_AGENT_UNAUTHORIZED',
      retryable: false,
      status,
    });
  }
  return new AgentConnectError(`agent handshake failed with HTTP ${status}`, {
    code: 'CALLBRIDGE_AGENT_HANDSHAKE',
    retryable: retryableStatus(status),
    status,
  });
}

export type FrameListener = (data: Buffer, isBinary: boolean) => void;

export interface OpenAgentSocket {
  ws: WebSocket;
  /**
   * Hands the socket's frames to `listener`, starting with any that arrived with the handshake.
   * The agent may send `Welcome` (and more) in the same packet as its 101 answer; ws emits those
   * before a listener attached after the open promise could exist, so they are collected here.
   */
  handOver(listener: FrameListener): void;
}

export function openAgentSocket(opts: AgentSocketOptions): Promise<OpenAgentSocket> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(opts.url, {
      headers: { authorization: opts.authorization },
      maxPayload: opts.maxPayloadBytes,
      perMessageDeflate: false,
    });
    const early: Array<[Buffer, boolean]> = [];
    const collect: FrameListener = (data, isBinary) => early.push([data, isBinary]);
    ws.on('message', collect);
    const handOver = (listener: FrameListener) => {
      ws.off('message', collect);
      for (const [data, isBinary] of early.splice(0)) listener(data, isBinary);
      ws.on('message', listener);
    };
    let settled = false;
    const settle = (error: AgentConnectError | null) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      ws.off('open', onOpen);
      ws.off('unexpected-response', onRefused);
      if (error) {
        ws.on('error', () => {}); // a late error on a socket we abandoned must not go unhandled
        ws.terminate();
        reject(error);
      } else {
        resolve({ ws, handOver });
      }
    };
    const onOpen = () => settle(null);
    const onRefused = (_req: unknown, res: { statusCode?: number; resume(): void }) => {
      res.resume();
      settle(refusal(res.statusCode ?? 0));
    };
    const timer = setTimeout(
      () =>
        settle(
          new AgentConnectError(`agent did not answer within ${opts.connectTimeoutMs} ms`, {
            code: 'CALLBRIDGE_AGENT_TIMEOUT',
            retryable: true,
          }),
        ),
      opts.connectTimeoutMs,
    );
    ws.once('open', onOpen);
    ws.once('unexpected-response', onRefused);
    ws.once('error', (err) =>
      settle(
        new AgentConnectError(`agent unreachable: ${err.message}`, {
          code: 'CALLBRIDGE_AGENT_UNREACHABLE',
          retryable: true,
        }),
      ),
    );
  });
}

// The local voice agent: one node:http server answering the agent WebSocket at /v1/agent/converse,
// the streaming speak WebSocket at /v2/speak, and the REST subset (token grant, think models, text
// intelligence, batch speak). Used by `callbridge sim` and, in-process, when no AGENT_URL is
// configured; it behaves like the real service (docs/protocols/agent.md;
// docs/protocols/speech-service.md sections 2 to 10).
import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import pino, { type Logger } from 'pino';
import { WebSocketServer } from 'ws';
import { AGENT_PATH } from '../../agent/protocol.js';
import { type AuthPolicy, authorize } from './auth.js';
import { HandshakeGate } from './handshake-gate.js';
import { errorBody, refuseUpgrade, sendJson } from './http-replies.js';
import { warmSpeech } from '../speech/spoken-text.js';
import { PhraseBook } from './phrases.js';
import { READ_PATH } from './read.js';
import { handleRest } from './rest.js';
import { SPEAK_V2_PATH } from './speak.js';
import { checkStreamQuery, serveSpeakStream } from './speak-stream.js';
import { parseScenario, type Scenario } from './scenario.js';
import { AgentSession } from './session.js';

export interface LocalAgentOptions {
  /** Default 127.0.0.1. */
  host?: string;
  /** Default 0: a free port. */
  port?: number;
  scenario?: Scenario;
  /** Default: silent. */
  logger?: Logger;
  /** Keys accepted as `Authorization: Token <key>`; empty or absent accepts any non-empty key. */
  apiKeys?: string[];
  /** Concurrent agent sockets; one more is refused with HTTP 429 at the upgrade. */
  maxConnections?: number;
  /** HS256 secret of granted JWTs; default a random one per server. */
  jwtSecret?: string;
  /** Pace reply audio like the real service (playback.ts); default true. Off: as fast as possible. */
  realtime?: boolean;
  /** Folder of phrases.json and the `.ulaw` recordings; default assets/phrases. */
  phraseDir?: string;
  /** Silence after speech that ends the caller's turn; default 600 ms. */
  endOfTurnSilenceMs?: number;
  /** How long a FunctionCallRequest waits for its responses before a fatal Error; default 10 s. */
  functionCallTimeoutMs?: number;
  /** Send a `LatencyReport` after each reply (the scenario's `latencyReports` also turns it on). */
  latencyReports?: boolean;
}

export interface LocalAgent {
  /** `ws://host:port`; the agent socket is at `${url}/v1/agent/converse`. */
  url: string;
  httpUrl: string;
  port: number;
  close(): Promise<void>;
  /** Agent sockets open (or being opened) right now. */
  connections(): number;
}

/** Largest client frame accepted: generous for audio chunks, small enough to bound memory. */
const MAX_PAYLOAD_BYTES = 1024 * 1024;
/** Streaming speak connections open at once; one more is refused with 429 (speech-service.md section 10). */
const MAX_SPEAK_STREAMS = 64;
const MAX_SPEAK_FRAME_BYTES = 64 * 1024;
/** How long close() waits for clients to answer the close frame before cutting them off. */
const CLOSE_GRACE_MS = 1000;

export async function startLocalAgent(opts: LocalAgentOptions): Promise<LocalAgent> {
  const host = opts.host ?? '127.0.0.1';
  const logger = opts.logger ?? pino({ level: 'silent' });
  const scenario = opts.scenario ? parseScenario(opts.scenario, 'scenario option') : undefined;
  // The synthesis thread starts and compiles while the phrases load: the first greeting does not wait.
  const [phrases] = await Promise.all([PhraseBook.load(opts.phraseDir), warmSpeech()]);
  const auth: AuthPolicy = {
    apiKeys: opts.apiKeys ?? [],
    jwtSecret: opts.jwtSecret ?? randomBytes(32).toString('hex'),
  };
  const gate = new HandshakeGate({
    ...(opts.maxConnections !== undefined ? { maxConnections: opts.maxConnections } : {}),
    ...(scenario?.refuseHandshake ? { refuse: scenario.refuseHandshake } : {}),
  });
  const sessions = new Set<AgentSession>();
  const wss = new WebSocketServer({ noServer: true, maxPayload: MAX_PAYLOAD_BYTES });
  const speakWss = new WebSocketServer({ noServer: true, maxPayload: MAX_SPEAK_FRAME_BYTES });

  const server = createServer((req, res) => {
    handleRest(req, res, auth, phrases).catch((err: unknown) => {
      logger.error({ err }, 'local agent request failed');
      if (!res.headersSent) sendJson(res, 500, errorBody(500, 'internal error'));
      else res.destroy();
    });
  });

  server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    socket.on('error', (err) => logger.debug({ err }, 'upgrade socket error'));
    const url = new URL(req.url ?? '/', 'http://localhost');
    const path = url.pathname;
    // speech-service.md section 9: /v1/read answers a WebSocket upgrade with 405.
    if (path === READ_PATH) return refuseUpgrade(socket, 405, '/v1/read takes POST only');
    if (path === SPEAK_V2_PATH) {
      const check = authorize(req.headers.authorization, auth);
      if (!check.ok) return refuseUpgrade(socket, 401, check.reason);
      // speech-service.md section 9: a batch-only or unknown parameter fails the connection.
      const query = checkStreamQuery(url.searchParams);
      if (!query.ok) return refuseUpgrade(socket, query.status, query.body);
      if (speakWss.clients.size >= MAX_SPEAK_STREAMS)
        return refuseUpgrade(socket, 429, 'too many speak streams');
      speakWss.handleUpgrade(req, socket, head, (ws) => serveSpeakStream(ws, query.options, phrases));
      return;
    }
    if (path !== AGENT_PATH) return refuseUpgrade(socket, 404, `no WebSocket endpoint at ${path}`);
    // docs/protocols/speech-service.md section 2: a JWT must be valid now, at the handshake; its later expiry is not checked.
    const check = authorize(req.headers.authorization, auth);
    if (!check.ok) return refuseUpgrade(socket, 401, check.reason);
    const admission = gate.admit();
    if (!admission.ok) {
      logger.info({ status: admission.status }, admission.description);
      return refuseUpgrade(socket, admission.status, admission.description);
    }
    // The slot is freed when the TCP socket closes, which also covers an upgrade `ws` rejects.
    socket.once('close', admission.release);
    wss.handleUpgrade(req, socket, head, (ws) => {
      const session = new AgentSession(ws, {
        phrases,
        scenario,
        logger,
        realtime: opts.realtime ?? true,
        endOfTurnSilenceMs: opts.endOfTurnSilenceMs ?? 600,
        functionCallTimeoutMs: opts.functionCallTimeoutMs ?? 10_000,
        latencyReports: opts.latencyReports === true || scenario?.latencyReports === true,
      });
      sessions.add(session);
      ws.once('close', () => sessions.delete(session));
      session.start();
    });
  });

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port ?? 0, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;
  // A wildcard address is where we listen, not where a client connects.
  const reachable = host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host;
  const authority = `${reachable.includes(':') ? `[${reachable}]` : reachable}:${port}`;
  logger.debug({ port }, 'local agent listening');

  let closing: Promise<void> | undefined;
  return {
    url: `ws://${authority}`,
    httpUrl: `http://${authority}`,
    port,
    connections: () => gate.active,
    close: () => {
      for (const ws of speakWss.clients) ws.terminate();
      closing ??= closeAll(server, wss, sessions).then(
        () => new Promise<void>((resolve) => speakWss.close(() => resolve())),
      );
      return closing;
    },
  };
}

async function closeAll(
  server: ReturnType<typeof createServer>,
  wss: WebSocketServer,
  sessions: Set<AgentSession>,
): Promise<void> {
  const serverClosed = new Promise<void>((resolve) => server.close(() => resolve()));
  for (const session of sessions) session.shutdown();
  const grace = setTimeout(() => {
    for (const ws of wss.clients) ws.terminate();
  }, CLOSE_GRACE_MS);
  await Promise.all(
    [...wss.clients].map(
      (ws) =>
        new Promise<void>((resolve) =>
          ws.readyState === ws.CLOSED ? resolve() : ws.once('close', () => resolve()),
        ),
    ),
  );
  clearTimeout(grace);
  server.closeAllConnections();
  await new Promise<void>((resolve) => wss.close(() => resolve()));
  await serverClosed;
}

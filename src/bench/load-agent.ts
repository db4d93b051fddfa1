// The bench's voice agent (its own process): the agent protocol of docs/protocols/agent.md reduced
// to what load needs. `Welcome` on connect, `SettingsApplied` on `Settings`; every uplink byte is
// checked and timed (frames.ts); and per call it talks as a real agent does: a reply of a couple of
// seconds sent in bursts five times faster than real time, then it listens, and every third reply
// the caller interrupts it (`UserStartedSpeaking`), after which nothing more of that reply is sent.
// Audio is in the format `Settings` declares (the carrier's own), in 20 ms frames of that format.
import WebSocket, { WebSocketServer } from 'ws';
import {
  DOWNLINK_MAGIC,
  FLAG_BURST_START,
  FRAME_BYTES,
  frameBytesOf,
  frameCall,
  frameTemplate,
  setClockOffsetMs,
  StreamVerifier,
  UPLINK_MAGIC,
  wallNowMs,
  writeFrame,
} from './frames.js';
import type { AudioEncoding } from '../audio/format.js';
import { type AgentCallReport, type AgentReport, onParentMessage, type Plan, toParent } from './ipc.js';
import { Samples } from './samples.js';

/** A burst: one binary message of 100 ms of audio. Whole frames, so no framer holds a remainder. */
const BURST_FRAMES = 5;
/** Five times real time. */
const BURST_INTERVAL_MS = 20;
/** A reply: 2 s of audio. */
const REPLY_FRAMES = 100;
/** An interrupted reply: the caller speaks up after 1 s of it was sent... */
const INTERRUPTED_FRAMES = 50;
/** ...while it is still playing at the carrier. */
const BARGE_IN_DELAY_MS = 200;
/** The caller's turn between two replies. */
const LISTEN_MS = 1000;
const FRAME_MS = 20;
const MAX_PAYLOAD_BYTES = 1024 * 1024;

const REPLY_TEXT = 'Thanks for calling. Our office is open Monday to Friday from eight to six.';
const USER_TEXT = 'What are your opening hours?';

interface CallState {
  call: number;
  verifier: StreamVerifier;
  template: Buffer;
  downSeq: number;
  downSentBytes: number;
  bargeInsAtMs: number[];
  replies: number;
  connections: number;
  /** The connection replies go out on. */
  conn: Connection | null;
}

interface Connection {
  ws: WebSocket;
  settings: boolean;
  /** One 20 ms frame of the format `Settings` declared. */
  frameBytes: number;
  state: CallState | null;
  timer: NodeJS.Timeout | null;
  closed: boolean;
  receivedAudio: boolean;
}

let plan: Plan | null = null;
const calls = new Map<number, CallState>();
const uplinkLatency = new Samples();
const messageTypes: Record<string, number> = Object.create(null);
let connections = 0;
let connectionsWithoutAudio = 0;
let unattributedBytes = 0;

function sendJson(conn: Connection, message: Record<string, unknown>): void {
  conn.ws.send(JSON.stringify(message));
}

function sendBurst(conn: Connection, state: CallState, frames: number): void {
  const frameBytes = state.template.length;
  const chunk = Buffer.allocUnsafe(frames * frameBytes);
  const sentAtMs = wallNowMs();
  for (let i = 0; i < frames; i++) {
    const flags = i === 0 ? FLAG_BURST_START : 0;
    writeFrame(
      chunk,
      i * frameBytes,
      state.template,
      DOWNLINK_MAGIC,
      state.call,
      state.downSeq++,
      sentAtMs,
      flags,
    );
  }
  if (conn.ws.readyState !== WebSocket.OPEN) return;
  state.downSentBytes += chunk.length;
  conn.ws.send(chunk, { binary: true });
}

/** One reply, then the next after the caller's turn, until the quiet time of the plan. */
function reply(conn: Connection, state: CallState): void {
  conn.timer = null;
  if (conn.closed || !plan) return;
  const { quietAtMs } = plan;
  const interrupted = (state.replies + state.call) % 3 === 0;
  const bursts = (interrupted ? INTERRUPTED_FRAMES : REPLY_FRAMES) / BURST_FRAMES;
  const sendingMs = bursts * BURST_INTERVAL_MS + (interrupted ? BARGE_IN_DELAY_MS : 0);
  // Nothing may be on its way when the carrier hangs up, or it would count as lost.
  if (wallNowMs() + sendingMs >= quietAtMs) return;
  if (state.replies > 0)
    sendJson(conn, {
      type: 'ConversationText',
      role: 'user',
      content: USER_TEXT,
    });
  state.replies++;
  sendJson(conn, {
    type: 'AgentStartedSpeaking',
    total_latency: 0.6,
    tts_latency: 0.2,
    ttt_latency: 0.4,
  });
  sendJson(conn, {
    type: 'ConversationText',
    role: 'assistant',
    content: REPLY_TEXT,
  });
  let sent = 0;
  const next = () => {
    conn.timer = null;
    if (conn.closed) return;
    // A loaded agent runs late: past the quiet time the reply is cut short rather than sent on.
    const late = wallNowMs() >= quietAtMs;
    if (!late) sendBurst(conn, state, BURST_FRAMES);
    if (late) {
      sendJson(conn, { type: 'AgentAudioDone' });
    } else if (++sent < bursts) {
      conn.timer = setTimeout(next, BURST_INTERVAL_MS);
    } else if (interrupted) {
      conn.timer = setTimeout(() => {
        if (conn.closed || wallNowMs() >= quietAtMs) return;
        state.bargeInsAtMs.push(wallNowMs());
        sendJson(conn, { type: 'UserStartedSpeaking' });
        conn.timer = setTimeout(() => reply(conn, state), LISTEN_MS);
      }, BARGE_IN_DELAY_MS);
    } else {
      sendJson(conn, { type: 'AgentAudioDone' });
      // The reply plays at the carrier in real time; the caller answers after it.
      const playingMs = REPLY_FRAMES * FRAME_MS - bursts * BURST_INTERVAL_MS;
      conn.timer = setTimeout(() => reply(conn, state), playingMs + LISTEN_MS);
    }
  };
  next();
}

function startTalking(conn: Connection): void {
  const state = conn.state;
  if (!state || !conn.settings || state.conn === conn) return;
  if (state.conn?.timer) clearTimeout(state.conn.timer);
  state.conn = conn;
  // Calls do not all speak in step: the first reply comes 100-600 ms after the caller is heard.
  conn.timer = setTimeout(() => reply(conn, state), 100 + Math.random() * 500);
}

function onAudio(conn: Connection, data: Buffer): void {
  const receivedAtMs = wallNowMs();
  conn.receivedAudio = true;
  let state = conn.state;
  if (!state) {
    const call = frameCall(data, 0, UPLINK_MAGIC, conn.frameBytes);
    if (call < 0) {
      unattributedBytes += data.length;
      return;
    }
    state = calls.get(call) ?? null;
    if (!state) {
      state = {
        call,
        verifier: new StreamVerifier(UPLINK_MAGIC, call, conn.frameBytes),
        template: frameTemplate(call, conn.frameBytes),
        downSeq: 0,
        downSentBytes: 0,
        bargeInsAtMs: [],
        replies: 0,
        connections: 0,
        conn: null,
      };
      calls.set(call, state);
    }
    state.connections++;
    conn.state = state;
    startTalking(conn);
  }
  // Before the plan arrives nothing is inside the window.
  const windowStartMs = plan?.windowStartMs ?? 0;
  const windowEndMs = plan?.windowEndMs ?? 0;
  state.verifier.push(data, (_seq, sentAtMs) => {
    if (sentAtMs >= windowStartMs && sentAtMs < windowEndMs) uplinkLatency.push(receivedAtMs - sentAtMs);
  });
}

function onText(conn: Connection, data: Buffer): void {
  let type = 'invalid';
  try {
    const message = JSON.parse(data.toString('utf8')) as {
      type?: unknown;
      audio?: { input?: { encoding?: AudioEncoding; sample_rate?: number } };
    };
    if (typeof message.type === 'string') type = message.type.slice(0, 64);
    const input = message.audio?.input;
    if (type === 'Settings' && input?.encoding && input.sample_rate) {
      conn.frameBytes = frameBytesOf({
        encoding: input.encoding,
        sampleRate: input.sample_rate,
        channels: 1,
      });
    }
  } catch {
    // Counted as 'invalid'.
  }
  messageTypes[type] = (messageTypes[type] ?? 0) + 1;
  if (type === 'Settings' && !conn.settings) {
    conn.settings = true;
    sendJson(conn, { type: 'SettingsApplied' });
    startTalking(conn);
  }
}

function report(): AgentReport {
  const perCall: AgentCallReport[] = [...calls.values()]
    .sort((a, b) => a.call - b.call)
    .map((s) => ({
      call: s.call,
      upInOrderBytes: s.verifier.tally.inOrderBytes,
      upReorderedBytes: s.verifier.tally.reorderedBytes,
      upDuplicateBytes: s.verifier.tally.duplicateBytes,
      upCorruptBytes: s.verifier.tally.corruptBytes,
      upPendingBytes: s.verifier.pendingBytes,
      downSentBytes: s.downSentBytes,
      bargeInsAtMs: s.bargeInsAtMs,
      replies: s.replies,
      connections: s.connections,
    }));
  return {
    kind: 'agent',
    calls: perCall,
    connections,
    connectionsWithoutAudio,
    unattributedBytes,
    uplinkLatencyMs: uplinkLatency.summary(),
    messageTypes,
  };
}

const wss = new WebSocketServer({
  host: '127.0.0.1',
  port: 0,
  path: '/v1/agent/converse',
  maxPayload: MAX_PAYLOAD_BYTES,
  perMessageDeflate: false,
});

wss.on('connection', (ws) => {
  connections++;
  const conn: Connection = {
    ws,
    settings: false,
    frameBytes: FRAME_BYTES,
    state: null,
    timer: null,
    closed: false,
    receivedAudio: false,
  };
  ws.on('message', (data: Buffer, isBinary: boolean) => {
    if (isBinary) onAudio(conn, data);
    else onText(conn, data);
  });
  ws.on('error', () => {});
  ws.on('close', () => {
    conn.closed = true;
    if (conn.timer) clearTimeout(conn.timer);
    if (!conn.receivedAudio) connectionsWithoutAudio++;
    if (conn.state?.conn === conn) conn.state.conn = null;
  });
  sendJson(conn, { type: 'Welcome', request_id: `bench-${connections}` });
});

wss.once('listening', () => {
  const address = wss.address();
  toParent({
    type: 'ready',
    port: typeof address === 'object' && address ? address.port : 0,
  });
});

onParentMessage((message) => {
  if (message.type === 'plan') {
    setClockOffsetMs(message.clockOffsetMs);
    plan = message.plan;
  } else if (message.type === 'report') toParent({ type: 'report', report: report() });
});

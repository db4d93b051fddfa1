// The bench's phone carrier (its own process): N calls placed as the chosen carrier places them
// (its simulated carrier's dialect: webhook, answer, media framing), started evenly over the ramp.
// Each announces the call, opens the media stream the answer names, sends the carrier's opening
// frames, then one 20 ms frame every 20 ms in real time, in the stream's own format (μ-law for
// Twilio, Telnyx and Plivo, 16-bit PCM at 16 kHz for Vonage, at 8 kHz for Exotel), framed as the
// carrier frames it, until the plan's hang-up. One drift-free 1 ms clock drives every call; calls
// are spread over the 20 slots of a frame period, as independent phones would be, rather than all
// sending at once. Marks are echoed when the audio before them would have played (a clear echoes
// them at once).
//
// The frames verify themselves byte for byte (frames.ts): the server takes each carrier's format as
// the agent does, so they pass untouched, and any byte it changed shows as damage.
import WebSocket from 'ws';
import { bytesPerMs } from '../audio/format.js';
import type { WireFrame } from '../call/carrier-port.js';
import type { SimServerEvent, SimStream } from '../sim/carrier/dialect.js';
import { findDialect } from '../sim/carrier/dialects/index.js';
import { startFrameClock } from '../sim/carrier/frame-clock.js';
import {
  DOWNLINK_MAGIC,
  FLAG_BURST_START,
  frameBytesOf,
  frameTemplate,
  setClockOffsetMs,
  StreamVerifier,
  UPLINK_MAGIC,
  wallNowMs,
  writeFrame,
} from './frames.js';
import { type CarrierCallReport, type CarrierReport, onParentMessage, type Plan, toParent } from './ipc.js';
import { Samples } from './samples.js';
import { benchSigningEnv } from './signing.js';

const FRAME_MS = 20;
const SLOTS = FRAME_MS;
const WEBHOOK_TIMEOUT_MS = 10_000;
const CONNECT_TIMEOUT_MS = 10_000;
/** After `stop`, how long the server has to close the stream before the carrier cuts it. */
const CLOSE_WAIT_MS = 5_000;

interface PendingMark {
  name: string;
  dueMs: number;
}

interface Call {
  index: number;
  stream: SimStream | null;
  ws: WebSocket | null;
  /** The call's uplink frame, in the stream's format (set once the answer names it). */
  template: Buffer;
  /** Bytes per millisecond of the stream's format: how long received audio plays. */
  bytesPerMs: number;
  upSeq: number;
  upSentBytes: number;
  /** Frames a batching carrier (Exotel) holds for its next message: not sent yet. */
  upHeldBytes: number;
  streaming: boolean;
  stopped: boolean;
  closed: Promise<void>;
  failure: string | null;
  verifier: StreamVerifier;
  clearsAtMs: number[];
  marksEchoed: number;
  /** When the audio received so far will have played, on the shared clock. */
  playoutEndMs: number;
  marks: PendingMark[];
  markTimer: NodeJS.Timeout | null;
}

const downlinkLatency = new Samples();
const setupMs = new Samples();
/** Calls whose stream started after the measurement window opened. */
let lateStarts = 0;
// A zero mask: ws then skips masking, which is the load generator's cost, not the server's.
const zeroMask = (mask: Buffer) => mask.fill(0);

function send(call: Call, message: WireFrame): boolean {
  if (call.ws?.readyState !== WebSocket.OPEN) return false;
  call.ws.send(message, { binary: typeof message !== 'string' });
  return true;
}

function sendFrame(call: Call): void {
  const sentAtMs = wallNowMs();
  // A fresh buffer per frame: a dialect may hold frames to send them in batches.
  const frame = Buffer.allocUnsafe(call.template.length);
  writeFrame(frame, 0, call.template, UPLINK_MAGIC, call.index, call.upSeq, sentAtMs, 0);
  let sent = true;
  const messages = call.stream!.callerAudio(frame);
  for (const message of messages) sent = send(call, message) && sent;
  // Only what left counts as sent: a stream the server closed early is a failure, not lost bytes,
  // and frames the carrier batches leave with its next message.
  if (!sent) return;
  call.upSeq++;
  call.upHeldBytes += frame.length;
  if (messages.length === 0) return;
  call.upSentBytes += call.upHeldBytes;
  call.upHeldBytes = 0;
}

function echoMarks(call: Call, nowMs: number): void {
  if (call.markTimer) clearTimeout(call.markTimer);
  call.markTimer = null;
  while (call.marks.length > 0 && call.marks[0]!.dueMs <= nowMs) {
    const mark = call.marks.shift()!;
    call.marksEchoed++;
    send(call, call.stream!.markPlayed(mark.name));
  }
  const next = call.marks[0];
  if (next) {
    call.markTimer = setTimeout(() => echoMarks(call, wallNowMs()), Math.max(1, next.dueMs - nowMs));
  }
}

function onServerFrame(call: Call, data: Buffer, isBinary: boolean, plan: Plan): void {
  const nowMs = wallNowMs();
  for (const event of call.stream!.serverFrame(data, isBinary)) onServerEvent(call, event, nowMs, plan);
}

function onServerEvent(call: Call, event: SimServerEvent, nowMs: number, plan: Plan): void {
  switch (event.type) {
    case 'audio': {
      const audio = event.payload;
      call.verifier.push(audio, (_seq, sentAtMs, flags) => {
        if (flags & FLAG_BURST_START && sentAtMs >= plan.windowStartMs && sentAtMs < plan.windowEndMs) {
          downlinkLatency.push(nowMs - sentAtMs);
        }
      });
      call.playoutEndMs = Math.max(call.playoutEndMs, nowMs) + audio.length / call.bytesPerMs;
      return;
    }
    case 'mark':
      call.marks.push({ name: event.name, dueMs: Math.max(nowMs, call.playoutEndMs) });
      if (!call.markTimer) echoMarks(call, nowMs);
      return;
    case 'clear': {
      call.clearsAtMs.push(nowMs);
      call.playoutEndMs = nowMs;
      const confirmation = call.stream!.cleared();
      if (confirmation !== null) send(call, confirmation);
      for (const mark of call.marks) mark.dueMs = nowMs;
      echoMarks(call, nowMs);
      return;
    }
    case 'warning':
      call.failure ??= `the server sent what the carrier would refuse: ${event.message}`;
      return;
  }
}

function openStream(stream: SimStream): Promise<WebSocket> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(stream.url, {
      headers: stream.headers,
      perMessageDeflate: false,
      generateMask: zeroMask,
    });
    const timer = setTimeout(() => {
      ws.terminate();
      reject(new Error('media stream did not open in time'));
    }, CONNECT_TIMEOUT_MS);
    ws.once('open', () => {
      clearTimeout(timer);
      resolve(ws);
    });
    ws.once('unexpected-response', (_req, res) => {
      clearTimeout(timer);
      res.resume();
      ws.terminate();
      reject(new Error(`media stream refused with HTTP ${res.statusCode}`));
    });
    ws.once('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
  });
}

async function placeCall(call: Call, serverUrl: string, carrier: string, plan: Plan, slots: Call[][]) {
  const startedMs = wallNowMs();
  const dialect = findDialect(carrier);
  if (dialect === undefined) throw new Error(`no simulated carrier named ${carrier}`);
  const answer = await dialect.announce({
    server: serverUrl,
    from: '+15550100',
    to: '+15550199',
    env: benchSigningEnv(carrier),
    timeoutMs: WEBHOOK_TIMEOUT_MS,
  });
  if (answer.kind === 'failed') throw new Error(answer.error);
  if (answer.kind === 'declined') throw new Error(`call declined: ${answer.reason}`);
  const { stream } = answer;
  call.stream = stream;
  const frameBytes = frameBytesOf(stream.format);
  call.template = frameTemplate(call.index, frameBytes);
  call.bytesPerMs = bytesPerMs(stream.format);
  call.verifier = new StreamVerifier(DOWNLINK_MAGIC, call.index, frameBytes);
  const ws = await openStream(stream);
  call.ws = ws;
  let closed!: () => void;
  call.closed = new Promise((resolve) => {
    closed = resolve;
  });
  ws.on('message', (data: Buffer, isBinary: boolean) => onServerFrame(call, data, isBinary, plan));
  ws.on('error', (err) => {
    call.failure ??= `media stream error: ${err.message}`;
  });
  ws.on('close', (code) => {
    if (!call.stopped) call.failure ??= `server closed the media stream early (${code})`;
    call.streaming = false;
    if (call.markTimer) clearTimeout(call.markTimer);
    closed();
  });
  for (const frame of stream.opening()) send(call, frame);
  setupMs.push(wallNowMs() - startedMs);
  if (wallNowMs() > plan.windowStartMs) lateStarts++;
  if (call.stopped) {
    call.failure ??= 'the call was set up only after the hang-up time';
    ws.terminate();
    return;
  }
  call.streaming = true;
  slots[call.index % SLOTS]!.push(call);
}

function hangUp(call: Call): void {
  call.stopped = true;
  call.streaming = false;
  const ws = call.ws;
  if (!ws || ws.readyState !== WebSocket.OPEN) return;
  const stop = call.stream!.stop();
  // A carrier with no last frame (Vonage) hangs up by closing the socket itself.
  if (stop !== null) send(call, stop);
  else ws.close(1000);
  setTimeout(() => {
    if (ws.readyState === WebSocket.CLOSED) return;
    // Frames the server has not read by now are dropped with the socket: the call failed.
    call.failure ??= `the server did not end the stream within ${CLOSE_WAIT_MS / 1000} s of stop`;
    ws.terminate();
  }, CLOSE_WAIT_MS).unref();
}

const sleepUntil = (wallMs: number) =>
  new Promise<void>((resolve) => setTimeout(resolve, Math.max(0, wallMs - wallNowMs())));

async function run(serverUrl: string, carrier: string, plan: Plan): Promise<CarrierReport> {
  const calls: Call[] = [];
  for (let index = 0; index < plan.calls; index++) {
    calls.push({
      index,
      stream: null,
      ws: null,
      template: frameTemplate(index),
      bytesPerMs: 8,
      upSeq: 0,
      upSentBytes: 0,
      upHeldBytes: 0,
      streaming: false,
      stopped: false,
      closed: Promise.resolve(),
      failure: null,
      verifier: new StreamVerifier(DOWNLINK_MAGIC, index),
      clearsAtMs: [],
      marksEchoed: 0,
      playoutEndMs: 0,
      marks: [],
      markTimer: null,
    });
  }
  const slots: Call[][] = Array.from({ length: SLOTS }, () => []);
  const clock = startFrameClock(1, (tick) => {
    for (const call of slots[tick % SLOTS]!) if (call.streaming) sendFrame(call);
  });
  const placed = calls.map(async (call) => {
    await sleepUntil(plan.startAtMs + (call.index * plan.rampMs) / plan.calls);
    try {
      await placeCall(call, serverUrl, carrier, plan, slots);
    } catch (err) {
      call.failure ??= (err as Error).message;
    }
  });
  await sleepUntil(plan.stopAtMs);
  clock.stop();
  for (const call of calls) hangUp(call);
  await Promise.all(placed);
  await Promise.all(calls.map((call) => call.closed));

  const perCall: CarrierCallReport[] = calls.map((call) => ({
    call: call.index,
    failure: call.failure,
    upSentBytes: call.upSentBytes,
    downInOrderBytes: call.verifier.tally.inOrderBytes,
    downReorderedBytes: call.verifier.tally.reorderedBytes,
    downDuplicateBytes: call.verifier.tally.duplicateBytes,
    downCorruptBytes: call.verifier.tally.corruptBytes,
    downPendingBytes: call.verifier.pendingBytes,
    clearsAtMs: call.clearsAtMs,
    marksEchoed: call.marksEchoed,
  }));
  return {
    kind: 'carrier',
    calls: perCall,
    downlinkLatencyMs: downlinkLatency.summary(),
    setupMs: setupMs.summary(),
    lateStarts,
  };
}

onParentMessage((message) => {
  if (message.type === 'run') {
    setClockOffsetMs(message.clockOffsetMs);
    run(message.serverUrl, message.carrier, message.plan).then(
      (report) => toParent({ type: 'report', report }),
      (err: Error) => toParent({ type: 'error', message: err.stack ?? err.message }),
    );
  }
});
toParent({ type: 'ready', port: 0 });

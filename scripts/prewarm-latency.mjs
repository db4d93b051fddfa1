#!/usr/bin/env node
// Measures the time from a media stream's `start` to the first agent audio sent to the caller,
// with and without pre-warming the agent at the voice webhook. The built-in local agent sits behind
// a proxy that delays every message and the handshake by ONE_WAY_MS, so the agent is as far away
// as a hosted one; the simulated carrier opens the stream STREAM_GAP_MS after the webhook answer,
// as the carrier does. Run after `npm run build`:  node scripts/prewarm-latency.mjs [calls]
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import WebSocket, { WebSocketServer } from 'ws';
import { createAgentDialer } from '../dist/agent/dialer.js';
import { buildApp } from '../dist/app.js';
import { loadConfig } from '../dist/config/load.js';
import { createMetrics } from '../dist/metrics/metrics.js';
import { startLocalAgent } from '../dist/sim/agent/server.js';
import { openStore } from '../dist/store/index.js';

const CALLS = Number(process.argv[2] ?? 10);
const ONE_WAY_MS = 40;
const STREAM_GAP_MS = 150;

/** A WebSocket relay that adds ONE_WAY_MS to the handshake and to every message each way. */
async function startDelayProxy(targetUrl) {
  const wss = new WebSocketServer({ host: '127.0.0.1', port: 0 });
  await new Promise((resolve) => wss.once('listening', resolve));
  wss.on('connection', (client, req) => {
    const held = [];
    let upstream;
    client.on('message', (data, isBinary) => {
      setTimeout(() => {
        if (upstream?.readyState === WebSocket.OPEN) upstream.send(data, { binary: isBinary });
        else held.push([data, isBinary]);
      }, ONE_WAY_MS);
    });
    client.on('close', () => upstream?.close());
    setTimeout(() => {
      upstream = new WebSocket(`${targetUrl}${req.url}`, {
        headers: { authorization: req.headers.authorization },
      });
      upstream.on('open', () => {
        for (const [data, isBinary] of held.splice(0)) upstream.send(data, { binary: isBinary });
      });
      upstream.on('message', (data, isBinary) =>
        setTimeout(
          () => client.readyState === WebSocket.OPEN && client.send(data, { binary: isBinary }),
          ONE_WAY_MS,
        ),
      );
      upstream.on('close', () => client.close());
      upstream.on('error', () => client.terminate());
    }, ONE_WAY_MS * 2);
  });
  return { url: `ws://127.0.0.1:${wss.address().port}`, close: () => wss.close() };
}

/** One call as the carrier places it: webhook, a gap, the stream; hangs up at the first agent audio. */
async function runCall(base, callSid, gapMs) {
  const res = await fetch(`${base}/carriers/twilio/voice`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ CallSid: callSid, From: '+15005550006', To: '+15005550001' }).toString(),
  });
  const twiml = await res.text();
  const streamUrl = /<Stream url="([^"]+)"/.exec(twiml)[1];
  const token = /<Parameter name="token" value="([^"]+)"/.exec(twiml)[1];
  await new Promise((r) => setTimeout(r, gapMs));
  const ws = new WebSocket(streamUrl);
  await new Promise((resolve) => ws.once('open', resolve));
  const streamSid = `MZ${randomBytes(16).toString('hex')}`;
  const heard = new Promise((resolve) => {
    ws.on('message', (data) => JSON.parse(data.toString()).event === 'media' && resolve());
    setTimeout(resolve, 5000);
  });
  ws.send(
    JSON.stringify({
      event: 'start',
      sequenceNumber: '1',
      streamSid,
      start: {
        callSid,
        streamSid,
        mediaFormat: { encoding: 'audio/x-mulaw', sampleRate: 8000, channels: 1 },
        customParameters: { token },
      },
    }),
  );
  await heard;
  ws.send(JSON.stringify({ event: 'stop', sequenceNumber: '2', streamSid, stop: { callSid } }));
  ws.close();
}

async function measure(prewarm) {
  const agent = await startLocalAgent({});
  const proxy = await startDelayProxy(agent.url);
  const dataDir = mkdtempSync(join(tmpdir(), 'callbridge-prewarm-'));
  const config = loadConfig({
    PORT: '0',
    HOST: '127.0.0.1',
    DATA_DIR: dataDir,
    AGENT_URL: proxy.url,
    AGENT_API_KEY: 'local',
    AGENT_PREWARM: String(prewarm),
  });
  const logger = pino({ level: 'silent' });
  const metrics = createMetrics(config.region);
  const store = await openStore(config);
  const dial = createAgentDialer(
    { url: proxy.url, apiKey: 'local', auth: 'key', speechApiUrl: agent.httpUrl, connectTimeoutMs: 5000 },
    metrics,
  );
  const app = await buildApp(config, { logger, store, dial, metrics, agentMode: 'remote' });
  await app.listen({ port: 0, host: '127.0.0.1' });
  const base = `http://127.0.0.1:${app.server.address().port}`;
  config.publicUrl = base;
  const firstAudio = [];
  for (let i = 0; i < CALLS; i++) {
    const callSid = `CA${randomBytes(16).toString('hex')}`;
    await runCall(base, callSid, STREAM_GAP_MS);
    await new Promise((r) => setTimeout(r, 50));
    const record = await store.getCallRecord(callSid);
    if (record?.latency.firstAudioMs != null) firstAudio.push(record.latency.firstAudioMs);
  }
  await app.close();
  await store.close();
  await agent.close();
  proxy.close();
  rmSync(dataDir, { recursive: true, force: true });
  firstAudio.sort((a, b) => a - b);
  const at = (q) => firstAudio[Math.min(firstAudio.length - 1, Math.floor(q * firstAudio.length))];
  return { prewarm, calls: firstAudio.length, p50: at(0.5), p90: at(0.9), max: firstAudio.at(-1) };
}

const results = [await measure(false), await measure(true)];
console.log(JSON.stringify({ oneWayMs: ONE_WAY_MS, streamGapMs: STREAM_GAP_MS, results }, null, 2));

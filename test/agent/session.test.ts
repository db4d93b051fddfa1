// One agent session over a real socket to a scripted fake agent: it sends only once the agent has
// applied the settings (holding what waits is the call's agent link), and holds agent output for
// a call that has not attached yet.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openAgentSocket } from '../../src/agent/connect.js';
import type { SettingsMessage } from '../../src/agent/protocol.js';
import { AgentSession } from '../../src/agent/session.js';
import { createMetrics } from '../../src/metrics/metrics.js';
import { silentLogger } from '../helpers/call-fakes.js';
import { type FakeAgent, startFakeAgent } from '../helpers/fake-agent.js';

const SETTINGS: SettingsMessage = {
  type: 'Settings',
  audio: {
    input: { encoding: 'mulaw', sample_rate: 8000 },
    output: { encoding: 'mulaw', sample_rate: 8000 },
  },
  agent: { greeting: 'Hello.' },
};

let agent: FakeAgent;
let session: AgentSession | null = null;

beforeEach(async () => {
  agent = await startFakeAgent();
});

afterEach(async () => {
  session?.close();
  session = null;
  await agent.close();
});

async function open(): Promise<AgentSession> {
  const socket = await openAgentSocket({
    url: `${agent.url}/v1/agent/converse`,
    authorization: 'Token test',
    connectTimeoutMs: 2000,
    maxPayloadBytes: 1024 * 1024,
  });
  session = new AgentSession(socket, SETTINGS, {
    dialStartedAtMs: performance.now(),
    maxHeldOutputBytes: 64 * 1024,
    maxBufferedBytes: 256 * 1024,
    metrics: createMetrics('test'),
    logger: silentLogger(),
  });
  return session;
}

describe('AgentSession', () => {
  it('sends nothing but Settings before SettingsApplied, and keeps no second queue', async () => {
    // Invariant: caller audio and messages wait in the call's one queue, not here as well.
    const s = await open();
    const conn = await agent.nextConnection();
    await conn.waitFor('Settings');
    s.sendAudio(Buffer.alloc(160, 1));
    s.send({ type: 'InjectAgentMessage', message: 'too early' });
    let ready = false;
    s.attach({ onReady: () => (ready = true), onAudio: () => {}, onMessage: () => {}, onClose: () => {} });
    conn.send({ type: 'SettingsApplied' });
    await until(() => ready);
    expect(s.isReady).toBe(true);
    expect(s.settingsAppliedAtMs).not.toBeNull();
    s.sendAudio(Buffer.alloc(160, 2));
    s.send({ type: 'KeepAlive' });
    await conn.waitFor('KeepAlive');
    await conn.waitForAudio(160);
    expect(conn.log.map((entry) => (entry.kind === 'text' ? entry.message.type : 'audio'))).toEqual([
      'Settings',
      'audio',
      'KeepAlive',
    ]);
    expect(conn.audioBytes().equals(Buffer.alloc(160, 2))).toBe(true);
  });

  it('holds what the agent says until a call attaches, then delivers it in order', async () => {
    const s = await open();
    const conn = await agent.nextConnection();
    conn.send({ type: 'AgentStartedSpeaking' });
    conn.sendAudio(Buffer.alloc(320, 7));
    conn.send({ type: 'SettingsApplied' }); // last: once it is read, so are the frames before it
    await until(() => s.isReady);
    const seen: string[] = [];
    s.attach({
      onReady: () => seen.push('ready'),
      onAudio: (chunk) => seen.push(`audio:${chunk.length}`),
      onMessage: (message) => seen.push(message.type),
      onClose: () => seen.push('close'),
    });
    expect(seen).toEqual(['Welcome', 'AgentStartedSpeaking', 'audio:320', 'ready']);
  });
});

async function until(predicate: () => boolean): Promise<void> {
  while (!predicate()) await new Promise((r) => setTimeout(r, 5));
}

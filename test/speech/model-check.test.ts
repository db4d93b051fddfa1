// The think model check at start: a warning, never a failure (the service may be down right now).
import { Writable } from 'node:stream';
import pino from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { warnUnknownThinkModels } from '../../src/speech/model-check.js';
import { agentRestBase } from '../../src/speech/models.js';
import { type LocalAgent, startLocalAgent } from '../../src/sim/agent/server.js';
import { loadProfile, MINIMAL_PROFILE, removeProjects } from '../config/project.js';
import { type FakeSpeech, startFakeSpeech } from '../helpers/fake-speech.js';

let agent: LocalAgent | undefined;
let fake: FakeSpeech | undefined;

afterEach(async () => {
  removeProjects();
  await agent?.close();
  agent = undefined;
  await fake?.close();
  fake = undefined;
});

function sink() {
  const lines: Array<Record<string, unknown>> = [];
  const stream = new Writable({
    write(chunk, _enc, done) {
      lines.push(JSON.parse(String(chunk)));
      done();
    },
  });
  return { logger: pino({ level: 'info' }, stream), lines };
}

describe('think models at start', () => {
  it('warns once per model the agent host does not list, and says nothing when all are listed', async () => {
    agent = await startLocalAgent({ port: 0 });
    const known = loadProfile(MINIMAL_PROFILE);
    const unknown = loadProfile({
      ...MINIMAL_PROFILE,
      think: [MINIMAL_PROFILE.think, { provider: { type: 'x', model: 'gpt-0' } }],
    });
    const { logger, lines } = sink();
    const api = { baseUrl: agent.httpUrl, authorization: 'Token local', timeoutMs: 1000 };
    await warnUnknownThinkModels({ default: known }, api, logger);
    expect(lines).toEqual([]);
    await warnUnknownThinkModels({ default: known, sales: unknown }, api, logger);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({
      level: 40,
      profile: 'sales',
      model: 'gpt-0',
      msg: 'profile sales: think model "gpt-0" is not listed by the agent host',
    });
  });

  it('warns in one line when the listing cannot be read', async () => {
    fake = await startFakeSpeech();
    fake.always('/v1/agent/settings/think/models', { status: 503 });
    const { logger, lines } = sink();
    await warnUnknownThinkModels(
      { default: loadProfile(MINIMAL_PROFILE) },
      { baseUrl: fake.url, authorization: 'Token secret-key-123', timeoutMs: 1000 },
      logger,
    );
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({
      level: 40,
      err: 'GET /v1/agent/settings/think/models answered HTTP 503',
    });
    expect(JSON.stringify(lines)).not.toContain('secret-key-123');
  });

  it('asks the agent host over http(s)', () => {
    expect(agentRestBase('wss://agent.speech.example')).toBe('https://agent.speech.example');
    expect(agentRestBase('ws://127.0.0.1:8090')).toBe('http://127.0.0.1:8090');
  });
});

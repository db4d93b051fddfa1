// `callbridge doctor`'s model checks: think models looked up at the agent host (never the global API
// host, which answers 404), listen and speak models against the family rules.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runDoctor } from '../../src/doctor/doctor.js';
import { exitCodeOf, formatLine } from '../../src/doctor/report.js';
import { type LocalAgent, startLocalAgent } from '../../src/sim/agent/server.js';
import { writeConfigDir } from '../helpers/config-dir.js';
import { type FakeSpeech, startFakeSpeech } from '../helpers/fake-speech.js';

const KEY = 'agent-key-secret-0123456789';
const PROFILE = {
  prompt: 'You answer the phone.',
  listen: { provider: { type: 'speech', model: 'std-3' } },
  think: { provider: { type: 'open_ai', model: 'gpt-4o-mini' } },
  speak: { provider: { type: 'speech', version: 'v2', model: 'turn-kit-en' } },
};

let dir: string;
let agent: LocalAgent | undefined;
let fake: FakeSpeech | undefined;
const configDirs: string[] = [];

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'callbridge-doctor-models-'));
});

afterEach(async () => {
  await agent?.close();
  agent = undefined;
  await fake?.close();
  fake = undefined;
  for (const d of configDirs.splice(0)) await rm(d, { recursive: true, force: true });
  await rm(dir, { recursive: true, force: true });
});

async function doctor(profiles: Record<string, Record<string, unknown>>, env: Record<string, string> = {}) {
  const configDir = writeConfigDir(profiles);
  configDirs.push(configDir);
  const lines = await runDoctor(
    { DATA_DIR: join(dir, 'data'), CONFIG_DIR: configDir, ...env },
    { timeoutMs: 1000 },
  );
  const text = lines.map(formatLine);
  return {
    text,
    exitCode: exitCodeOf(lines),
    models: text.filter((line) => /think model|family rules|listen model|speak/.test(line)),
  };
}

describe('doctor: model checks', () => {
  it('fails with one clear line on a think model the agent host does not list', async () => {
    agent = await startLocalAgent({ apiKeys: [KEY] });
    const { text, exitCode } = await doctor(
      {
        default: PROFILE,
        sales: { ...PROFILE, think: { provider: { type: 'open_ai', model: 'gpt-9-imaginary' } } },
      },
      { AGENT_URL: agent.url, AGENT_API_KEY: KEY, SPEECH_API_URL: agent.httpUrl },
    );
    expect(exitCode).toBe(1);
    const failures = text.filter((line) => line.startsWith('FAIL'));
    expect(failures).toEqual([
      `FAIL profile sales: think model "gpt-9-imaginary" is not listed by ${agent.httpUrl}/v1/agent/settings/think/models (4 listed)`,
    ]);
  });

  it('checks every entry of a think chain, and leaves a provider with its own endpoint alone', async () => {
    const { text } = await doctor({
      default: {
        ...PROFILE,
        think: [
          { provider: { type: 'open_ai', model: 'gpt-4o-mini' } },
          { provider: { type: 'open_ai', model: 'not-listed' } },
          { provider: { type: 'custom', model: 'my-own-llm' }, endpoint: { url: 'https://llm.example.com' } },
        ],
      },
    });
    expect(text.filter((line) => line.includes('think model'))).toEqual([
      'FAIL profile default: think model "not-listed" is not listed by the built-in local agent (4 listed)',
    ]);
  });

  it('asks the agent host for the think models, never the API host, which answers 404', async () => {
    // The listing lives on the agent host; the global API host answers 404 for it (docs/protocols/speech-service.md section 4).
    fake = await startFakeSpeech();
    fake.always('/v1/agent/settings/think/models', { status: 404, body: { err_code: 'NOT_FOUND' } });
    agent = await startLocalAgent({ apiKeys: [KEY] });
    const { text } = await doctor(
      { default: PROFILE },
      { AGENT_URL: agent.url, AGENT_API_KEY: KEY, SPEECH_API_URL: fake.url },
    );
    expect(text).toContain(
      `ok   think models: every profile's model is listed by ${agent.httpUrl}/v1/agent/settings/think/models (4 listed)`,
    );
  });

  it('reads a listing of plain strings too, and fails in one line when it cannot be read', async () => {
    fake = await startFakeSpeech();
    // An agent on loopback is also the speech API, whose probe reads the same listing at the same
    // time: each run is scripted twice, so either request may come first.
    const listing = { status: 200, body: ['gpt-4o-mini'] };
    const missing = { status: 404, body: { err_code: 'NOT_FOUND', err_msg: 'no such path' } };
    for (const answer of [listing, listing, missing, missing]) {
      fake.script('/v1/agent/settings/think/models', answer);
    }
    const agentUrl = fake.url.replace('http://', 'ws://');
    const first = await doctor({ default: PROFILE }, { AGENT_URL: agentUrl, AGENT_API_KEY: KEY });
    expect(first.text).toContain(
      `ok   think models: every profile's model is listed by ${fake.url}/v1/agent/settings/think/models (1 listed)`,
    );
    const second = await doctor({ default: PROFILE }, { AGENT_URL: agentUrl, AGENT_API_KEY: KEY });
    expect(second.text).toContain(
      `FAIL think models: cannot list them at ${fake.url}/v1/agent/settings/think/models: ` +
        'GET /v1/agent/settings/think/models answered HTTP 404 NOT_FOUND: no such path',
    );
    expect(fake.requests.every((r) => r.headers.authorization === `Token ${KEY}`)).toBe(true);
    expect(second.text.join('\n')).not.toContain(KEY);
  });

  it('holds listen models to the std-/turn- families', async () => {
    const withListen = (model: string) => ({ ...PROFILE, listen: { provider: { type: 'speech', model } } });
    const { text, exitCode } = await doctor({
      default: PROFILE,
      a: withListen('turn'),
      b: withListen('lyric-2-andromeda-en'),
      c: withListen('turn-general-multi'),
      d: withListen('enhanced'),
    });
    expect(exitCode).toBe(1);
    expect(text.filter((line) => line.includes('listen model'))).toEqual([
      'FAIL profile a: listen model a bare "turn" is not a model; name one, such as turn-general-en',
      'FAIL profile b: listen model "lyric-2-andromeda-en" is not a speech-to-text model (std- or turn- family)',
    ]);
  });

  it('passes the shipped-style profiles, speak chains included', async () => {
    const { text, exitCode } = await doctor({
      default: {
        ...PROFILE,
        speak: [PROFILE.speak, { provider: { type: 'speech', model: 'lyric-2-andromeda-en' } }],
      },
    });
    expect(exitCode).toBe(0);
    expect(text).toContain(
      'ok   listen and speak models follow the family rules (listen std- or turn-; speak lyric- on v1, turn- on v2)',
    );
  });
});

// Scenario files: validation, and the scripted failures (Error, abrupt drop) they can stage.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { DEFAULT_PHRASE_DIR } from '../../src/sim/agent/phrases.js';
import { loadScenario, parseScenario } from '../../src/sim/agent/scenario.js';
import { type LocalAgent, startLocalAgent } from '../../src/sim/agent/server.js';
import { AgentTestClient, makeSettings } from './local-agent-client.js';

const dir = mkdtempSync(join(tmpdir(), 'callbridge-scenario-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function file(name: string, content: string): string {
  const path = join(dir, name);
  writeFileSync(path, content);
  return path;
}

describe('loadScenario', () => {
  it('reads a valid scenario', () => {
    const path = file(
      'ok.json',
      JSON.stringify({
        greeting: 'greeting',
        turns: [
          { user: 'Hi', reply: 'help', delayMs: 200 },
          { functionCalls: [{ name: 'lookup', arguments: '{"a":1}' }], reply: 'Your order shipped.' },
          { error: { code: 'SIM_FAILURE', description: 'scripted' } },
          { drop: true },
          { drop: true, dropAfterMs: 500, reply: 'goodbye' },
        ],
        refuseHandshake: { status: 429, times: 2 },
      }),
    );
    const scenario = loadScenario(path);
    expect(scenario.turns).toHaveLength(5);
    expect(scenario.refuseHandshake).toEqual({ status: 429, times: 2 });
  });

  it.each([
    ['not JSON', '{', /not valid JSON/],
    ['turns missing', '{}', /turns must be an array/],
    ['a reply missing', '{"turns":[{"user":"Hi"}]}', /turns\[0\]\.reply is required/],
    ['an unknown field', '{"turns":[],"turn":[]}', /turn is not a scenario field/],
    [
      'an unknown turn field',
      '{"turns":[{"reply":"help","delay":5}]}',
      /turns\[0\]\.delay is not a scenario field/,
    ],
    ['a bad status', '{"turns":[],"refuseHandshake":{"status":200}}', /refuseHandshake\.status/],
    [
      'dropAfterMs without drop',
      '{"turns":[{"reply":"help","dropAfterMs":5}]}',
      /turns\[0\]\.dropAfterMs needs "drop": true/,
    ],
    ['a negative delay', '{"turns":[{"reply":"help","delayMs":-1}]}', /turns\[0\]\.delayMs/],
    [
      'a nameless function',
      '{"turns":[{"reply":"help","functionCalls":[{}]}]}',
      /turns\[0\]\.functionCalls\[0\]\.name/,
    ],
    ['an error without code', '{"turns":[{"error":{"description":"x"}}]}', /turns\[0\]\.error\.code/],
  ])('rejects %s, naming the field', (name, content, message) => {
    const path = file(`${name.replace(/\W+/g, '-')}.json`, content);
    expect(() => loadScenario(path)).toThrow(message);
    try {
      loadScenario(path);
    } catch (err) {
      expect((err as { code: string }).code).toBe('CALLBRIDGE_CONFIG_INVALID');
      expect((err as Error).message).toContain(path);
    }
  });

  it('names a missing file', () => {
    expect(() => loadScenario(join(dir, 'absent.json'))).toThrow(/cannot read/);
  });

  it('validates scenarios built in code too', () => {
    expect(() => parseScenario({ turns: [{ reply: '' }] })).toThrow(
      /turns\[0\]\.reply must be a non-empty string/,
    );
  });
});

describe('scripted failures', () => {
  let agent: LocalAgent | undefined;
  const clients: AgentTestClient[] = [];

  afterEach(async () => {
    for (const client of clients.splice(0)) client.close();
    await agent?.close();
    agent = undefined;
  });

  async function liveWith(turns: unknown[], realtime = false): Promise<AgentTestClient> {
    agent = await startLocalAgent({ port: 0, realtime, scenario: parseScenario({ turns }) });
    const client = await AgentTestClient.live(agent.url, makeSettings());
    clients.push(client);
    return client;
  }

  it('sends the scripted Error and closes', async () => {
    const client = await liveWith([
      { user: 'Hello?', error: { code: 'SIM_FAILURE', description: 'scripted failure' } },
    ]);
    client.send({ type: 'InjectUserMessage', content: 'Hello?' });
    await client.next('ConversationText');
    expect(await client.next('Error')).toEqual({
      type: 'Error',
      code: 'SIM_FAILURE',
      description: 'scripted failure',
    });
    expect((await client.closed).code).toBe(1011);
  });

  it('drops the socket without Error or close frame', async () => {
    const client = await liveWith([{ drop: true }]);
    client.send({ type: 'InjectUserMessage', content: 'Hello?' });
    // 1006: the connection ended without a close frame.
    expect((await client.closed).code).toBe(1006);
    expect(client.indexOf('Error')).toBe(-1);
  });

  it('drops mid-reply after dropAfterMs', async () => {
    const client = await liveWith([{ drop: true, dropAfterMs: 100, reply: 'unavailable' }], true);
    client.send({ type: 'InjectUserMessage', content: 'Hello?' });
    await client.until('AgentStartedSpeaking');
    const from = client.cursor;
    expect((await client.closed).code).toBe(1006);
    expect(client.indexOf('AgentAudioDone')).toBe(-1);
    expect(client.indexOf('Error')).toBe(-1);
    // The unavailable phrase is 4.7 s long: at twice real time its audio takes 2.3 s to send.
    const full = readFileSync(`${DEFAULT_PHRASE_DIR}/unavailable.ulaw`).length;
    expect(client.audioBytes(from).length).toBeLessThan(full);
  });
});

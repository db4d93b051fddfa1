// Client-side function calls scripted by a scenario (docs/protocols/agent.md section 7: answer every
// `client_side: true` entry, matching each `id`).
import { afterEach, describe, expect, it } from 'vitest';
import type { Scenario } from '../../src/sim/agent/scenario.js';
import { type LocalAgent, startLocalAgent } from '../../src/sim/agent/server.js';
import { AgentTestClient, makeSettings } from './local-agent-client.js';

const lookupOrder = {
  name: 'lookup_order',
  description: 'Finds an order',
  parameters: { type: 'object', properties: { order: { type: 'string' } } },
};

const scenario: Scenario = {
  turns: [
    {
      user: 'Where is order 42?',
      functionCalls: [{ name: 'lookup_order', arguments: { order: '42' } }],
      reply: 'check',
    },
  ],
};

let agent: LocalAgent | undefined;
const clients: AgentTestClient[] = [];

afterEach(async () => {
  for (const client of clients.splice(0)) client.close();
  await agent?.close();
  agent = undefined;
});

async function liveWith(functions: unknown[], functionCallTimeoutMs = 10_000): Promise<AgentTestClient> {
  agent = await startLocalAgent({ port: 0, realtime: false, scenario, functionCallTimeoutMs });
  const settings = makeSettings({
    agent: { think: { provider: { type: 'open_ai', model: 'gpt-4o-mini' }, functions } },
  });
  const client = await AgentTestClient.live(agent.url, settings);
  clients.push(client);
  return client;
}

describe('function calls', () => {
  it('sends FunctionCallRequest and replies only after the response with the matching id', async () => {
    const client = await liveWith([lookupOrder]);
    client.send({ type: 'InjectUserMessage', content: 'Where is order 42?' });
    await client.next('ConversationText');
    await client.next('AgentThinking');
    const request = await client.next('FunctionCallRequest');
    const functions = request.functions as {
      id: string;
      name: string;
      arguments: string;
      client_side: boolean;
    }[];
    expect(functions).toHaveLength(1);
    expect(functions[0]).toMatchObject({ name: 'lookup_order', client_side: true });
    expect(JSON.parse(functions[0]!.arguments)).toEqual({ order: '42' });

    client.send({ type: 'FunctionCallResponse', id: 'fc_other', name: 'lookup_order', content: '{}' });
    // The reply has not come: the agent is still waiting for the right id.
    expect((await client.next('Warning')).code).toBe('UNKNOWN_FUNCTION_CALL');
    client.send({
      type: 'FunctionCallResponse',
      id: functions[0]!.id,
      name: 'lookup_order',
      content: '{"status":"shipped"}',
    });
    expect(await client.next('ConversationText')).toMatchObject({
      role: 'assistant',
      content: 'Let me check that for you.',
    });
    await client.next('AgentStartedSpeaking');
    await client.next('AgentAudioDone');
  });

  it('ends the session with Error when no response comes in time', async () => {
    const client = await liveWith([lookupOrder], 50);
    client.send({ type: 'InjectUserMessage', content: 'Where is order 42?' });
    await client.until('FunctionCallRequest');
    expect((await client.next('Error')).code).toBe('FUNCTION_CALL_TIMEOUT');
    expect((await client.closed).code).toBe(1011);
  });

  it('does not call a function Settings did not declare client-side', async () => {
    const client = await liveWith([{ ...lookupOrder, endpoint: { url: 'https://example.test/orders' } }]);
    client.send({ type: 'InjectUserMessage', content: 'Where is order 42?' });
    await client.next('ConversationText');
    await client.next('AgentThinking');
    expect((await client.next('ConversationText')).role).toBe('assistant');
    expect(client.indexOf('FunctionCallRequest')).toBe(-1);
  });
});

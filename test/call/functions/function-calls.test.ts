// The function calls of one call with fakes for the log, the events and the agent: every
// client-side entry answered by id, the built-ins asking the session to end or transfer (never
// doing it themselves), the record and the event, and the agent's own entries left alone.
import type { Counter } from 'prom-client';
import { beforeEach, describe, expect, it } from 'vitest';
import type { AgentClientMessage, FunctionCallEntry } from '../../../src/agent/protocol.js';
import type { AgentProfile } from '../../../src/config/types.js';
import { CallEventHub, type CallEvent } from '../../../src/call/watch/events.js';
import { FunctionCalls } from '../../../src/call/functions/function-calls.js';
import { createMetrics, type Metrics } from '../../../src/metrics/metrics.js';
import type { FunctionCallRecord } from '../../../src/store/call-record.js';
import { silentLogger } from '../../helpers/call-fakes.js';

const PROFILE: AgentProfile = {
  name: 'default',
  language: 'en',
  prompt: 'You are a test agent.',
  greeting: 'Hello.',
  think: [{ provider: { type: 'open_ai', model: 'gpt-4o-mini' } }],
  builtins: { endCall: true, transferAllowList: ['+15550199'] },
  httpFunctions: [],
  dtmf: { enabled: false, interDigitTimeoutMs: 2000, terminator: '#', maxDigits: 20 },
  limits: { silencePromptMs: 0, silenceHangupMs: 0, maxCallMs: 0 },
  fallback: {},
  tags: [],
};

let metrics: Metrics;
let sent: AgentClientMessage[];
let recorded: Array<Omit<FunctionCallRecord, 'atMs'> & { atMs?: number }>;
let published: CallEvent[];
let asked: string[];

function functionCalls(canTransfer = true): FunctionCalls {
  const events = new CallEventHub();
  events.subscribe('CA-fn', (event) => published.push(event));
  return new FunctionCalls({
    call: {
      callSid: 'CA-fn',
      from: '+15005550006',
      to: '+15005550001',
      profileName: 'default',
      profile: PROFILE,
    },
    canTransfer,
    log: { elapsedMs: () => 1234, functionCall: (call) => recorded.push(call) },
    metrics,
    events,
    logger: silentLogger(),
    updater: { request: async () => 'applied' },
    send: (message) => sent.push(message),
    endAfterReply: () => asked.push('end'),
    transferAfterReply: (target) => asked.push(`transfer ${target}`),
  });
}

const entry = (name: string, args: Record<string, unknown> = {}, clientSide = true): FunctionCallEntry => ({
  id: `fc_${name}`,
  name,
  arguments: JSON.stringify(args),
  client_side: clientSide,
});

async function count(counter: Counter<string>, labels: Record<string, string>): Promise<number> {
  const { values } = await counter.get();
  return values
    .filter((v) => Object.entries(labels).every(([k, want]) => v.labels[k] === want))
    .reduce((n, v) => n + v.value, 0);
}

beforeEach(() => {
  metrics = createMetrics('test');
  sent = [];
  recorded = [];
  published = [];
  asked = [];
});

describe('function calls', () => {
  it('end_call asks the session for a polite end and answers the agent by id', async () => {
    await functionCalls().answer(entry('end_call'));
    expect(asked).toEqual(['end']);
    expect(sent).toHaveLength(1);
    expect(sent[0]).toMatchObject({ type: 'FunctionCallResponse', id: 'fc_end_call', name: 'end_call' });
    expect(recorded[0]).toMatchObject({ name: 'end_call', outcome: 'ok', atMs: 1234, id: 'fc_end_call' });
    expect(published).toEqual([{ type: 'function', name: 'end_call', outcome: 'ok' }]);
    expect(await count(metrics.functionCalls, { function: 'end_call', outcome: 'ok' })).toBe(1);
  });

  it('transfer_call to an allowed number asks for the transfer; elsewhere or without call control it refuses', async () => {
    await functionCalls().answer(entry('transfer_call', { target: '+15550199' }));
    await functionCalls().answer(entry('transfer_call', { target: '+15550000' }));
    await functionCalls(false).answer(entry('transfer_call', { target: '+15550199' }));
    expect(asked).toEqual(['transfer +15550199']);
    expect(recorded.map((r) => r.outcome)).toEqual(['ok', 'refused', 'unavailable']);
    expect(sent).toHaveLength(3);
  });

  it('answers only client-side entries of a request, and reads a malformed list as none', async () => {
    const calls = functionCalls();
    calls.request([entry('end_call', {}, false), entry('no_such_function')]);
    calls.request('not a list');
    calls.request(undefined);
    await new Promise((resolve) => setImmediate(resolve));
    expect(asked).toEqual([]);
    expect(recorded.map((r) => [r.name, r.outcome])).toEqual([['no_such_function', 'unknown']]);
    // An unknown name is counted under a bounded label.
    expect(await count(metrics.functionCalls, { function: 'unknown', outcome: 'unknown' })).toBe(1);
  });
});

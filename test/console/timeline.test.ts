// A call's page lists everything the record holds in call time (docs/console.md "A call's page"):
// every turn, barge-in, DTMF digit, function call and the end, each reply with its own latency.
import { describe, expect, it } from 'vitest';
import { timelineOf, turnMarkers } from '../../web/src/timeline.js';
import type { CallDetail } from '../../web/src/types.js';

function record(extra: Partial<CallDetail> = {}): CallDetail {
  return {
    callSid: 'CA1',
    streamSid: 'MZ1',
    carrier: 'twilio',
    direction: 'inbound',
    from: '+15550100',
    to: '+15550199',
    profile: 'default',
    startedAt: '2026-01-01T10:00:00.000Z',
    endedAt: '2026-01-01T10:00:20.000Z',
    durationMs: 20_000,
    endReason: 'caller-hangup',
    outcome: 'completed',
    bargeIns: 1,
    turns: [
      {
        role: 'assistant',
        content: 'Hello, how can I help?',
        interrupted: false,
        sentMs: 2000,
        heardMs: 2000,
        atMs: 500,
      },
      { role: 'user', content: 'I need an appointment', interrupted: false, atMs: 4000 },
      {
        role: 'assistant',
        content: 'Sure, I can',
        generated: 'Sure, I can help with that.',
        interrupted: true,
        sentMs: 3000,
        heardMs: 900,
        atMs: 6000,
      },
      { role: 'user', content: 'Tomorrow', interrupted: false, atMs: 7500 },
      { role: 'assistant', content: 'Booked.', interrupted: false, sentMs: 800, heardMs: 800, atMs: 9000 },
    ],
    functionCalls: [
      { name: 'book', arguments: '{"day":"tomorrow"}', outcome: 'ok', durationMs: 120, atMs: 8700 },
    ],
    latency: { firstAudioMs: 300, agentConnectMs: 100, agentReportedMs: [], perceivedMs: [640, 710] },
    prewarmed: false,
    ...extra,
  };
}

describe('timelineOf', () => {
  it('orders turns, function calls, events and the end by their moment in the call', () => {
    const items = timelineOf(record({ events: [{ type: 'dtmf', digits: '42', atMs: 8000 }] }));
    expect(items.map((item) => [item.kind, item.atMs])).toEqual([
      ['turn', 500],
      ['turn', 4000],
      ['turn', 6000],
      ['barge-in', 6900],
      ['turn', 7500],
      ['dtmf', 8000],
      ['function', 8700],
      ['turn', 9000],
      ['end', 20_000],
    ]);
    expect(items.at(-1)).toEqual({
      kind: 'end',
      atMs: 20_000,
      reason: 'caller-hangup',
      outcome: 'completed',
    });
    expect(items.find((item) => item.kind === 'dtmf')).toMatchObject({ digits: '42' });
  });

  it('gives each reply to a caller its own perceived latency, and the greeting none', () => {
    const agentTurns = timelineOf(record()).filter((item) => item.kind === 'turn' && item.role === 'agent');
    expect(agentTurns.map((item) => (item.kind === 'turn' ? item.latencyMs : null))).toEqual([
      undefined,
      640,
      710,
    ]);
  });

  it('takes barge-ins from the event log when it has them, without doubling them from the turns', () => {
    const items = timelineOf(record({ events: [{ type: 'barge-in', atMs: 6850 }] }));
    expect(items.filter((item) => item.kind === 'barge-in')).toEqual([{ kind: 'barge-in', atMs: 6850 }]);
  });

  it('shows an unknown event type by its name rather than dropping it', () => {
    const items = timelineOf(record({ events: [{ type: 'transfer', atMs: 10_000 }] }));
    expect(items).toContainEqual({ kind: 'event', atMs: 10_000, label: 'transfer' });
  });

  it('copes with a record that holds no turns at all', () => {
    expect(timelineOf(record({ turns: [], functionCalls: [] }))).toEqual([
      { kind: 'end', atMs: 20_000, reason: 'caller-hangup', outcome: 'completed' },
    ]);
  });
});

describe('turnMarkers', () => {
  it("shades a caller's turn on the caller's channel from when they began speaking", () => {
    // Issue 30: the console marked a caller's turn as a point; each turn is shaded on its channel.
    const turns = [
      {
        role: 'assistant' as const,
        kind: 'consent' as const,
        content: 'Recorded.',
        interrupted: false,
        atMs: 0,
        sentMs: 800,
        heardMs: 800,
      },
      { role: 'user' as const, content: 'Hi', interrupted: false, atMs: 3_000, spokeFromMs: 2_200 },
    ];
    expect(turnMarkers(record({ turns }))).toEqual([
      { startS: 0, endS: 0.8, role: 'agent', text: 'Recorded.' },
      { startS: 2.2, endS: 3, role: 'caller', text: 'Hi' },
    ]);
  });

  it('spans a reply over what the caller heard of it and marks a caller turn where it came', () => {
    expect(turnMarkers(record()).slice(0, 3)).toEqual([
      { startS: 0.5, endS: 2.5, role: 'agent', text: 'Hello, how can I help?' },
      { startS: 4, endS: 4, role: 'caller', text: 'I need an appointment' },
      { startS: 6, endS: 6.9, role: 'agent', text: 'Sure, I can' },
    ]);
  });
});

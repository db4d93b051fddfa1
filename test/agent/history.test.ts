// The History builder (docs/protocols/agent.md, History): turns and function calls in time order,
// calls of one request together, bounded.
import { describe, expect, it } from 'vitest';
import { buildHistory, MAX_HISTORY_MESSAGES, MAX_HISTORY_RESPONSE_CHARS } from '../../src/agent/history.js';

const call = (name: string, atMs: number, extra: Record<string, unknown> = {}) => ({
  name,
  arguments: '{}',
  outcome: 'ok',
  atMs,
  ...extra,
});

describe('buildHistory', () => {
  it('groups calls with no turn between them into one message, in time order', () => {
    const history = buildHistory(
      [
        { role: 'user', content: 'Two things', atMs: 100 },
        { role: 'assistant', content: 'Done', atMs: 900 },
      ],
      [call('b', 500, { id: 'fc_2', response: '"B"' }), call('a', 400, { id: 'fc_1', response: '"A"' })],
    );
    expect(history).toEqual([
      { type: 'History', role: 'user', content: 'Two things' },
      {
        type: 'History',
        function_calls: [
          { id: 'fc_1', name: 'a', client_side: true, arguments: '{}', response: '"A"' },
          { id: 'fc_2', name: 'b', client_side: true, arguments: '{}', response: '"B"' },
        ],
      },
      { type: 'History', role: 'assistant', content: 'Done' },
    ]);
  });

  it('stands in for a missing id and answer, and leaves out empty turns', () => {
    const history = buildHistory(
      [{ role: 'assistant', content: '   ', atMs: 0 }],
      [call('end_call', 10, { outcome: 'refused' })],
    );
    expect(history).toEqual([
      {
        type: 'History',
        function_calls: [
          {
            id: 'fc_history_1',
            name: 'end_call',
            client_side: true,
            arguments: '{}',
            response: '{"outcome":"refused"}',
          },
        ],
      },
    ]);
  });

  it('keeps a turn before the calls it led to when both carry the same instant', () => {
    const history = buildHistory([{ role: 'user', content: 'Look it up', atMs: 50 }], [call('lookup', 50)]);
    expect(history.map((m) => ('role' in m ? m.role : 'calls'))).toEqual(['user', 'calls']);
  });

  it('cuts long answers and keeps only the newest messages', () => {
    const long = buildHistory([], [call('f', 1, { response: 'x'.repeat(MAX_HISTORY_RESPONSE_CHARS + 50) })]);
    const entry = long[0] as { function_calls: Array<{ response: string }> };
    expect(entry.function_calls[0]!.response).toHaveLength(MAX_HISTORY_RESPONSE_CHARS);

    const turns = Array.from({ length: MAX_HISTORY_MESSAGES + 20 }, (_, i) => ({
      role: 'user' as const,
      content: `turn ${i}`,
      atMs: i,
    }));
    const history = buildHistory(turns);
    expect(history).toHaveLength(MAX_HISTORY_MESSAGES);
    expect(history.at(-1)).toEqual({
      type: 'History',
      role: 'user',
      content: `turn ${MAX_HISTORY_MESSAGES + 19}`,
    });
  });
});

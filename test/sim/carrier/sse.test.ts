import { describe, expect, it } from 'vitest';
import { createSseParser } from '../../../src/sim/carrier/sse.js';

function parseAll(chunks: string[]): string[] {
  const out: string[] = [];
  const parser = createSseParser((data) => out.push(data));
  for (const chunk of chunks) parser.push(chunk);
  return out;
}

describe('createSseParser', () => {
  it('dispatches each event at its blank line, joining data lines', () => {
    expect(parseAll(['data: {"a":1}\n\ndata: line1\ndata:line2\n\n'])).toEqual(['{"a":1}', 'line1\nline2']);
  });

  it('ignores comments, other fields and events without data', () => {
    expect(parseAll([': keep-alive\n\nevent: x\nid: 7\nretry: 10\n\nevent: y\ndata: z\n\n'])).toEqual(['z']);
  });

  it('handles CRLF and lone CR line ends, including a CRLF split across chunks', () => {
    expect(parseAll(['data: one\r', '\n\r', '\ndata: two\r\rdata: three\n', '\n'])).toEqual([
      'one',
      'two',
      'three',
    ]);
  });

  it('waits for the blank line when an event arrives in pieces', () => {
    const out: string[] = [];
    const parser = createSseParser((data) => out.push(data));
    parser.push('da');
    parser.push('ta: hel');
    parser.push('lo\n');
    expect(out).toEqual([]);
    parser.push('\n');
    expect(out).toEqual(['hello']);
  });
});

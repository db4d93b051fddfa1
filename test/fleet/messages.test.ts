// What instances read off each other's channels is checked before it is acted on: anything that is
// not one of the fleet's messages, whole and within bounds, is dropped as null, never thrown.
import { describe, expect, it } from 'vitest';
import { parseInboxMessage, parseRelayedEvent } from '../../src/fleet/messages.js';

describe('parseInboxMessage', () => {
  it('reads each message the fleet sends', () => {
    expect(parseInboxMessage('{"type":"hangup","id":"r1","from":"a","callSid":"CA1"}')).toEqual({
      type: 'hangup',
      id: 'r1',
      from: 'a',
      callSid: 'CA1',
    });
    expect(
      parseInboxMessage(
        '{"type":"transfer","id":"r2","from":"a","callSid":"CA1","target":"+15550100","x":1}',
      ),
    ).toEqual({ type: 'transfer', id: 'r2', from: 'a', callSid: 'CA1', target: '+15550100' });
    expect(parseInboxMessage('{"type":"release_prewarm","carrier":"twilio","callSid":"CA1"}')).toEqual({
      type: 'release_prewarm',
      carrier: 'twilio',
      callSid: 'CA1',
    });
    expect(parseInboxMessage('{"type":"listen","callSid":"CA1"}')).toEqual({
      type: 'listen',
      callSid: 'CA1',
    });
    expect(parseInboxMessage('{"type":"reply","id":"r1","ok":false,"reason":"not_found"}')).toEqual({
      type: 'reply',
      id: 'r1',
      ok: false,
      reason: 'not_found',
    });
  });

  it.each([
    ['empty', ''],
    ['not JSON', 'hangup CA1'],
    ['an array', '[{"type":"hangup"}]'],
    ['null', 'null'],
    ['an unknown type', '{"type":"reboot","id":"r"}'],
    ['a missing field', '{"type":"hangup","id":"r1","from":"a"}'],
    ['a field of the wrong type', '{"type":"hangup","id":"r1","from":"a","callSid":7}'],
    ['an empty field', '{"type":"release_prewarm","carrier":"","callSid":"CA1"}'],
    ['an oversized field', JSON.stringify({ type: 'hangup', id: 'r', from: 'a', callSid: 'C'.repeat(600) })],
    ['a reply without ok', '{"type":"reply","id":"r1"}'],
    ['a listen request without a call', '{"type":"listen","callSid":""}'],
  ])('drops %s', (_name, text) => {
    expect(parseInboxMessage(text)).toBeNull();
  });
});

describe('parseRelayedEvent', () => {
  it('reads a call event with the instance it came from', () => {
    expect(parseRelayedEvent('{"origin":"a","event":{"type":"end","reason":"caller_hangup"}}')).toEqual({
      origin: 'a',
      event: { type: 'end', reason: 'caller_hangup' },
    });
  });

  it.each([
    ['not JSON', '{'],
    ['no origin', '{"event":{"type":"end","reason":"x"}}'],
    ['no event', '{"origin":"a"}'],
    ['an unknown event', '{"origin":"a","event":{"type":"reboot"}}'],
    ['an event that is not an object', '{"origin":"a","event":"end"}'],
  ])('drops %s', (_name, text) => {
    expect(parseRelayedEvent(text)).toBeNull();
  });
});

import { describe, expect, it } from 'vitest';
import { decodeEntities, readTwimlAnswer } from '../../../src/sim/carrier/twiml.js';

describe('readTwimlAnswer', () => {
  it('reads <Connect><Stream> with its parameters, decoding entities', () => {
    const xml = `<?xml version="1.0" encoding="UTF-8"?>
      <Response>
        <Connect>
          <Stream url="wss://host.example/media/twilio?x=1&amp;y=2" track="inbound_track">
            <Parameter name="token" value="a&amp;b&lt;c&gt;&quot;d&#39;&#x41;"/>
            <Parameter value='second' name='profile' />
          </Stream>
        </Connect>
      </Response>`;
    expect(readTwimlAnswer(xml)).toEqual({
      kind: 'stream',
      url: 'wss://host.example/media/twilio?x=1&y=2',
      parameters: { token: `a&b<c>"d'A`, profile: 'second' },
    });
  });

  it('reads a self-closing <Stream/> with no parameters', () => {
    expect(readTwimlAnswer('<Response><Connect><Stream url="ws://h/m"/></Connect></Response>')).toEqual({
      kind: 'stream',
      url: 'ws://h/m',
      parameters: {},
    });
  });

  it('keeps a parameter named __proto__ as an ordinary key', () => {
    const xml =
      '<Response><Connect><Stream url="ws://h/m"><Parameter name="__proto__" value="x"/></Stream></Connect></Response>';
    const answer = readTwimlAnswer(xml);
    expect(answer.kind === 'stream' && Object.entries(answer.parameters)).toEqual([['__proto__', 'x']]);
  });

  it('declines on <Say> then <Hangup/>, keeping what was said', () => {
    const answer = readTwimlAnswer(
      '<Response><Say voice="alice">Sorry, this number is not in service &amp; never was.</Say><Hangup/></Response>',
    );
    expect(answer).toEqual({
      kind: 'declined',
      say: 'Sorry, this number is not in service & never was.',
      reason: 'the answer has no <Connect><Stream>',
    });
  });

  it('declines a one-way <Start><Stream> and says why', () => {
    const answer = readTwimlAnswer(
      '<Response><Start><Stream url="wss://h/m"/></Start><Pause length="60"/></Response>',
    );
    expect(answer.kind).toBe('declined');
    expect(answer.kind === 'declined' && answer.reason).toMatch(/one-way/);
  });

  it('declines a <Stream> without url and an empty answer', () => {
    expect(readTwimlAnswer('<Response><Connect><Stream/></Connect></Response>')).toMatchObject({
      kind: 'declined',
      reason: '<Stream> has no url attribute',
    });
    expect(readTwimlAnswer('')).toMatchObject({ kind: 'declined', say: '' });
  });
});

describe('decodeEntities', () => {
  it('leaves unknown and out-of-range references as they are', () => {
    expect(decodeEntities('&nbsp; &#x110000; &amp;amp;')).toBe('&nbsp; &#x110000; &amp;');
  });
});

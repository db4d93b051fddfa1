import { describe, expect, it } from 'vitest';
import {
  dialXml,
  isDialTarget,
  redirectXml,
  speakHangupXml,
  streamXml,
} from '../../../src/carriers/plivo/xml.js';

describe('plivo XML', () => {
  it('answers with a bidirectional, kept-alive stream, every value escaped', () => {
    expect(
      streamXml({
        url: 'wss://bridge.example.com/media/plivo/i-1/v1.a&b<c>',
        contentType: 'audio/x-mulaw;rate=8000',
        statusCallbackUrl: 'https://bridge.example.com/carriers/plivo/stream-status?a="1"',
      }),
    ).toBe(
      '<?xml version="1.0" encoding="UTF-8"?><Response><Stream bidirectional="true" keepCallAlive="true" ' +
        'contentType="audio/x-mulaw;rate=8000" ' +
        'statusCallbackUrl="https://bridge.example.com/carriers/plivo/stream-status?a=&quot;1&quot;" ' +
        'statusCallbackMethod="POST">wss://bridge.example.com/media/plivo/i-1/v1.a&amp;b&lt;c&gt;</Stream></Response>',
    );
  });

  it('declines by speaking then hanging up, or by redirecting', () => {
    expect(speakHangupXml('Sorry <busy> & closed\u0000')).toBe(
      '<?xml version="1.0" encoding="UTF-8"?><Response><Speak>Sorry &lt;busy&gt; &amp; closed</Speak><Hangup/></Response>',
    );
    expect(redirectXml('https://x.example/?a=1&b=2')).toBe(
      '<?xml version="1.0" encoding="UTF-8"?><Response><Redirect method="POST">https://x.example/?a=1&amp;b=2</Redirect></Response>',
    );
  });

  it('dials numbers and SIP addresses, and nothing else', () => {
    expect(dialXml('+15550100')).toBe(
      '<?xml version="1.0" encoding="UTF-8"?><Response><Dial><Number>15550100</Number></Dial></Response>',
    );
    expect(dialXml('sip:desk@pbx.example.com')).toContain(
      '<Dial><User>sip:desk@pbx.example.com</User></Dial>',
    );
    for (const bad of ['15550100', '+0123', 'sip:', 'sip:a b', '<Hangup/>', '']) {
      expect(isDialTarget(bad)).toBe(false);
      expect(() => dialXml(bad)).toThrow(/dial target/);
    }
  });
});

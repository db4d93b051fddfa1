import { describe, expect, it } from 'vitest';
import {
  connectStreamTwiml,
  dialTwiml,
  redirectTwiml,
  sayHangupTwiml,
} from '../../../src/carriers/twilio/twiml.js';

const DECL = '<?xml version="1.0" encoding="UTF-8"?>';

describe('connectStreamTwiml', () => {
  it('builds a bidirectional stream with parameters', () => {
    expect(connectStreamTwiml('wss://h.example/media/twilio', { token: 'abc', tenant: 't1' })).toBe(
      `${DECL}<Response><Connect><Stream url="wss://h.example/media/twilio">` +
        '<Parameter name="token" value="abc"/><Parameter name="tenant" value="t1"/>' +
        '</Stream></Connect></Response>',
    );
  });

  it('builds a stream without parameters', () => {
    expect(connectStreamTwiml('wss://h.example/m', {})).toBe(
      `${DECL}<Response><Connect><Stream url="wss://h.example/m"></Stream></Connect></Response>`,
    );
  });

  it('escapes every XML-special character in names, values and the URL', () => {
    const xml = connectStreamTwiml('wss://h.example/m&x', { 'n"<>&\'': 'v"<>&\'' });
    expect(xml).toContain('url="wss://h.example/m&amp;x"');
    expect(xml).toContain(
      '<Parameter name="n&quot;&lt;&gt;&amp;&apos;" value="v&quot;&lt;&gt;&amp;&apos;"/>',
    );
    expect(xml).not.toMatch(/value="[^"]*"[^/]/);
  });

  it('keeps whitespace in values as character references and drops characters XML cannot carry', () => {
    const xml = connectStreamTwiml('wss://h.example/m', { k: 'a\tb\nc\rd\u0000e\uFFFFf\uD800g' });
    expect(xml).toContain('value="a&#9;b&#10;c&#13;defg"');
  });

  it('keeps astral characters intact', () => {
    expect(connectStreamTwiml('wss://h.example/m', { k: 'smile \u{1F600}' })).toContain(
      'value="smile \u{1F600}"',
    );
  });

  it('refuses a stream URL with a query string', () => {
    expect(() => connectStreamTwiml('wss://h.example/m?token=1', {})).toThrow(/query string/);
  });
});

describe('sayHangupTwiml', () => {
  it('says the text then hangs up, with text escaped', () => {
    expect(sayHangupTwiml('Sorry, Tom & Jerry\'s line is busy <now> "thanks"')).toBe(
      `${DECL}<Response><Say>Sorry, Tom &amp; Jerry's line is busy &lt;now&gt; "thanks"</Say><Hangup/></Response>`,
    );
  });
});

describe('dialTwiml', () => {
  it('dials an E.164 number', () => {
    expect(dialTwiml('+15551234567')).toBe(
      `${DECL}<Response><Dial><Number>+15551234567</Number></Dial></Response>`,
    );
  });

  it('dials a SIP URI, escaped', () => {
    expect(dialTwiml('sip:agent@pbx.example;transport=tls?x=1&y=2')).toBe(
      `${DECL}<Response><Dial><Sip>sip:agent@pbx.example;transport=tls?x=1&amp;y=2</Sip></Dial></Response>`,
    );
    expect(dialTwiml('sips:agent@pbx.example')).toContain('<Sip>sips:agent@pbx.example</Sip>');
  });

  it.each(['5551234567', '+0123', '+1 555 123 4567', '+1234567890123456', 'tel:+15551234567', ''])(
    'refuses %j',
    (target) => {
      expect(() => dialTwiml(target)).toThrow(/E\.164/);
    },
  );
});

describe('redirectTwiml', () => {
  it('redirects to an escaped URL', () => {
    expect(redirectTwiml('https://h.example/next?a=1&b=2')).toBe(
      `${DECL}<Response><Redirect>https://h.example/next?a=1&amp;b=2</Redirect></Response>`,
    );
  });
});

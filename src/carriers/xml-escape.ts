// Escaping for the XML answers carriers read (Plivo's XML, Twilio's TwiML). Characters XML 1.0
// cannot carry at all are dropped rather than producing a document the carrier would reject.

const XML_FORBIDDEN =
  // eslint-disable-next-line no-control-regex -- matching control characters is the point
  /[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

const TEXT_ESCAPES: Readonly<Record<string, string>> = Object.freeze({
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
});

// Tab and newlines as character references: a parser turns literal ones in attributes into spaces.
const ATTRIBUTE_ESCAPES: Readonly<Record<string, string>> = Object.freeze({
  ...TEXT_ESCAPES,
  '"': '&quot;',
  "'": '&apos;',
  '\t': '&#9;',
  '\n': '&#10;',
  '\r': '&#13;',
});

export function escapeXmlText(value: string): string {
  return value.replace(XML_FORBIDDEN, '').replace(/[&<>]/g, (ch) => TEXT_ESCAPES[ch] ?? ch);
}

export function escapeXmlAttribute(value: string): string {
  return value.replace(XML_FORBIDDEN, '').replace(/[&<>"'\t\n\r]/g, (ch) => ATTRIBUTE_ESCAPES[ch] ?? ch);
}

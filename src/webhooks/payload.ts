// Reading a provider's JSON body, once per delivery, and its fields without trusting its shape.

/** Each raw body's parse, kept as long as the body itself: a check that needs it parsed early (inbox rules) and the ingress share one parse. */
const parsedBodies = new WeakMap<Buffer, { ok: true; value: unknown } | { ok: false }>();

/** The raw body parsed as JSON (UTF-8), parsed at most once per body. */
export function parsedBody(rawBody: Buffer): { ok: true; value: unknown } | { ok: false } {
  let parsed = parsedBodies.get(rawBody);
  if (parsed === undefined) {
    try {
      parsed = { ok: true, value: JSON.parse(rawBody.toString('utf8')) as unknown };
    } catch {
      parsed = { ok: false };
    }
    parsedBodies.set(rawBody, parsed);
  }
  return parsed;
}

/** A string field, or a finite number as a string; anything else is null. */
export function textField(body: unknown, name: string): string | null {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return null;
  const value = (body as Record<string, unknown>)[name];
  if (typeof value === 'string') return value;
  if (typeof value === 'number' && Number.isFinite(value)) return String(value);
  return null;
}

/** Delivery ids become idempotency keys and log fields: short printable text only. */
export function deliveryIdOf(value: string | null | undefined): string | null {
  return value && value.length <= 200 && /^[\x21-\x7e]+$/.test(value) ? value : null;
}

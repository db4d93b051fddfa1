// Reading fields of a provider's JSON body without trusting its shape.

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

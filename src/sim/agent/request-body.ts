// Request bodies and query strings of the local service's REST side, read with bounds.
import type { IncomingMessage } from 'node:http';

/** The request body as text, or undefined past `maxBytes` (the rest is not read). */
export async function readBody(req: IncomingMessage, maxBytes: number): Promise<string | undefined> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > maxBytes) {
      req.resume();
      return undefined;
    }
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks).toString('utf8');
}

export type QueryCheck = { ok: true; values: Map<string, string> } | { ok: false; problem: string };

/**
 * The query's parameters, each given at most once and each one of `allowed`; the first problem in
 * words otherwise. Named parameters only: an unknown one is a mistake worth hearing about.
 */
export function readQuery(search: URLSearchParams, allowed: readonly string[]): QueryCheck {
  const values = new Map<string, string>();
  for (const [name, value] of search) {
    if (!allowed.includes(name))
      return { ok: false, problem: `unknown parameter ${JSON.stringify(name.slice(0, 40))}` };
    if (values.has(name)) return { ok: false, problem: `parameter ${name} is given more than once` };
    values.set(name, value);
  }
  return { ok: true, values };
}

/** `true`/`false` flags as query parameters carry them; anything else is undefined. */
export function readFlag(value: string | undefined): boolean | undefined {
  if (value === undefined) return false;
  if (value === 'true') return true;
  if (value === 'false') return false;
  return undefined;
}

// URL rules shared by environment variables and config files, so both say the same thing about a
// bad URL.

export interface UrlRule {
  /** Accepted schemes without the colon, e.g. `['ws', 'wss']`. */
  schemes: readonly string[];
  /** A host-only URL (the agent host) has no path; base URLs may carry a path prefix. */
  path: boolean;
  query: boolean;
}

export type UrlCheck = { ok: true; url: string } | { ok: false; problem: string };

export const HOST_URL = (schemes: readonly string[]): UrlRule => ({
  schemes,
  path: false,
  query: false,
});

export const BASE_URL = (schemes: readonly string[]): UrlRule => ({
  schemes,
  path: true,
  query: false,
});

export const ENDPOINT_URL = (schemes: readonly string[]): UrlRule => ({
  schemes,
  path: true,
  query: true,
});

/** Says in words what `rule` accepts, for error messages. */
export function describeUrlRule(rule: UrlRule): string {
  const schemes = rule.schemes.join(' or ');
  const banned = [rule.path ? null : 'path', rule.query ? null : 'query', 'fragment'].filter(
    (part): part is string => part !== null,
  );
  const last = banned.pop();
  const list = banned.length > 0 ? `${banned.join(', ')} or ${last}` : last;
  // "an http…" but "a ws…".
  const article = schemes.startsWith('h') ? 'an' : 'a';
  return `must be ${article} ${schemes} URL with no ${list}`;
}

/** Checks `raw` against `rule` and returns it without a trailing slash (callers append paths). */
export function checkUrl(raw: string, rule: UrlRule): UrlCheck {
  const fail: UrlCheck = { ok: false, problem: describeUrlRule(rule) };
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return fail;
  }
  const scheme = url.protocol.slice(0, -1);
  if (!rule.schemes.includes(scheme) || url.hostname === '') return fail;
  if (!rule.path && url.pathname !== '/' && url.pathname !== '') return fail;
  if (!rule.query && (url.search !== '' || raw.includes('?'))) return fail;
  if (url.hash !== '' || raw.includes('#')) return fail;
  // Credentials belong in their own variables, where they stay out of logs and messages.
  if (url.username !== '' || url.password !== '') {
    return { ok: false, problem: `${describeUrlRule(rule)}, and no user or password` };
  }
  return { ok: true, url: rule.query ? url.href : url.href.replace(/\/+$/, '') };
}

/** A URL fit to quote in an error message: user and password in it are masked. */
export function maskUrlCredentials(raw: string): string {
  try {
    const url = new URL(raw);
    if (url.username === '' && url.password === '') return raw;
    if (url.username !== '') url.username = '***';
    if (url.password !== '') url.password = '***';
    return url.href;
  } catch {
    return raw;
  }
}

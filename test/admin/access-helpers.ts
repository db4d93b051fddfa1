// What the access tests share: a server with ADMIN_TOKEN, a key of each role made through the API,
// and requests by bearer or cookie.
import type { Role } from '../../src/store/access.js';
import { startServer, type TestServer } from '../helpers/server.js';

export const ADMIN_TOKEN = 'admin-token-for-access-tests-01';
export const ENV = { AGENT_URL: 'ws://127.0.0.1:9', AGENT_API_KEY: 'k', ADMIN_TOKEN };

export interface Answer {
  status: number;
  headers: Headers;
  body: Record<string, unknown> & { error?: { code: string; message: string } };
}

export async function call(
  server: TestServer,
  method: string,
  path: string,
  opts: {
    bearer?: string;
    cookie?: string;
    csrf?: string;
    body?: unknown;
    headers?: Record<string, string>;
  } = {},
): Promise<Answer> {
  const headers: Record<string, string> = { ...opts.headers };
  if (opts.bearer !== undefined) headers.authorization = `Bearer ${opts.bearer}`;
  if (opts.cookie !== undefined) headers.cookie = opts.cookie;
  if (opts.csrf !== undefined) headers['x-callbridge-csrf'] = opts.csrf;
  if (opts.body !== undefined) headers['content-type'] = 'application/json';
  const controller = new AbortController();
  const res = await fetch(`${server.baseUrl}${path}`, {
    method,
    headers,
    signal: controller.signal,
    ...(opts.body !== undefined ? { body: JSON.stringify(opts.body) } : {}),
  });
  // Event streams stay open: their status and headers are all a caller here needs.
  if ((res.headers.get('content-type') ?? '').startsWith('text/event-stream')) {
    controller.abort();
    return { status: res.status, headers: res.headers, body: {} };
  }
  const text = await res.text();
  let body: Answer['body'] = {};
  try {
    body = text ? (JSON.parse(text) as Answer['body']) : {};
  } catch {
    body = { text } as Answer['body'];
  }
  return { status: res.status, headers: res.headers, body };
}

export async function createKey(server: TestServer, role: Role, name = `${role} key`): Promise<string> {
  const answer = await call(server, 'POST', '/v1/keys', { bearer: ADMIN_TOKEN, body: { name, role } });
  if (answer.status !== 201)
    throw new Error(`could not create a ${role} key: ${JSON.stringify(answer.body)}`);
  return answer.body.key as string;
}

/** Signs in with `key`; the cookie to send back and the anti-forgery token. */
export async function signIn(
  server: TestServer,
  key: string,
): Promise<{ cookie: string; csrf: string; setCookie: string }> {
  const answer = await call(server, 'POST', '/v1/session', { body: { key } });
  if (answer.status !== 200) throw new Error(`sign-in refused: ${JSON.stringify(answer.body)}`);
  const setCookie = answer.headers.get('set-cookie') ?? '';
  return { cookie: setCookie.split(';')[0]!, csrf: answer.body.csrf as string, setCookie };
}

export async function startAccessServer(env: Record<string, string> = {}): Promise<TestServer> {
  return startServer({ ...ENV, ...env });
}

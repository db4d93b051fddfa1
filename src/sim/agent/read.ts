// POST /v1/read, the text intelligence endpoint, as docs/protocols/speech-service.md sections 5 and 9 have it:
//   - POST only: GET (and a WebSocket upgrade, see server.ts) answer 405;
//   - `language` is required and checked before any other problem (400 INVALID_QUERY_PARAMETER,
//     "missing field language"); only English: `en`, `en-US` (echoed as `en`), never `multi`;
//   - `summarize` is `true` or `v2`; `sentiment`, `topics`, `intents` are flags;
//   - the JSON body holds exactly one of `text` or `url` (PAYLOAD_ERROR otherwise); a `url` that
//     points at audio is a REMOTE_CONTENT_ERROR.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { randomUUID } from 'node:crypto';
import { type AuthPolicy, authorize } from './auth.js';
import { codedError, errorBody, sendJson } from './http-replies.js';
import { readBody, readFlag, readQuery } from './request-body.js';
import { analyzeText } from './text-analysis.js';

export const READ_PATH = '/v1/read';

const QUERY = ['language', 'summarize', 'sentiment', 'topics', 'intents'] as const;
const MAX_BODY_BYTES = 1024 * 1024;
/** A `url` document is read up to this size and for this long. */
const MAX_REMOTE_BYTES = 1024 * 1024;
const REMOTE_TIMEOUT_MS = 5000;
/** English only (4.6): `en` or a regional English such as `en-US`. */
const ENGLISH = /^en(-[A-Za-z]{2,8})?$/;

export async function handleRead(req: IncomingMessage, res: ServerResponse, auth: AuthPolicy): Promise<void> {
  if (req.method !== 'POST') {
    res.setHeader('allow', 'POST');
    return sendJson(res, 405, errorBody(405, '/v1/read takes POST only'));
  }
  const search = new URL(req.url ?? '/', 'http://localhost').searchParams;
  // speech-service.md section 9: a missing language is reported before any other problem.
  const language = search.getAll('language');
  if (language.length === 0 || language[0] === '') {
    return sendJson(res, 400, codedError('INVALID_QUERY_PARAMETER', 'missing field language'));
  }
  if (language.length > 1 || !ENGLISH.test(language[0]!)) {
    return sendJson(
      res,
      400,
      codedError(
        'INVALID_QUERY_PARAMETER',
        `language ${JSON.stringify(language.join(',').slice(0, 40))} is not supported: only English (en) is`,
      ),
    );
  }
  const check = authorize(req.headers.authorization, auth);
  if (!check.ok) return sendJson(res, 401, errorBody(401, check.reason));

  const query = readQuery(search, QUERY);
  if (!query.ok) return sendJson(res, 400, codedError('INVALID_QUERY_PARAMETER', query.problem));
  const summarize = query.values.get('summarize');
  if (summarize !== undefined && summarize !== 'true' && summarize !== 'v2') {
    return sendJson(res, 400, codedError('INVALID_QUERY_PARAMETER', 'summarize must be true or v2'));
  }
  const flags = { sentiment: false, topics: false, intents: false };
  for (const name of ['sentiment', 'topics', 'intents'] as const) {
    const flag = readFlag(query.values.get(name));
    if (flag === undefined) {
      return sendJson(res, 400, codedError('INVALID_QUERY_PARAMETER', `${name} must be true or false`));
    }
    flags[name] = flag;
  }

  const raw = await readBody(req, MAX_BODY_BYTES);
  if (raw === undefined) return sendJson(res, 413, errorBody(413, `body over ${MAX_BODY_BYTES} bytes`));
  const source = readSource(raw);
  if (!source.ok) return sendJson(res, 400, codedError('PAYLOAD_ERROR', source.problem));
  let text = source.text;
  if (source.url !== undefined) {
    const remote = await fetchText(source.url);
    if (!remote.ok) return sendJson(res, 400, codedError('REMOTE_CONTENT_ERROR', remote.problem));
    text = remote.text;
  }

  sendJson(res, 200, {
    metadata: { request_id: randomUUID(), created: new Date().toISOString(), language: 'en' },
    results: analyzeText(text ?? '', { summarize: summarize !== undefined, ...flags }),
  });
}

type Source = { ok: true; text?: string; url?: string } | { ok: false; problem: string };

/** Exactly one of `text` or `url`, each a non-empty string (4.6). */
function readSource(raw: string): Source {
  let body: unknown;
  try {
    body = JSON.parse(raw);
  } catch {
    return { ok: false, problem: 'the body must be JSON with text or url' };
  }
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    return { ok: false, problem: 'the body must be a JSON object with text or url' };
  }
  const { text, url } = body as { text?: unknown; url?: unknown };
  if ((text === undefined) === (url === undefined)) {
    return { ok: false, problem: 'the body must hold exactly one of text or url' };
  }
  if (text !== undefined) {
    if (typeof text !== 'string' || text.trim() === '')
      return { ok: false, problem: 'text must be a non-empty string' };
    return { ok: true, text };
  }
  if (typeof url !== 'string' || !/^https?:\/\//.test(url) || !URL.canParse(url)) {
    return { ok: false, problem: 'url must be an http or https URL' };
  }
  return { ok: true, url };
}

type Remote = { ok: true; text: string } | { ok: false; problem: string };

/** The plain-text document at `url`; audio (or anything not text) is refused (7). */
async function fetchText(url: string): Promise<Remote> {
  let response: Response;
  try {
    response = await fetch(url, { redirect: 'error', signal: AbortSignal.timeout(REMOTE_TIMEOUT_MS) });
  } catch {
    return { ok: false, problem: 'the url could not be read' };
  }
  const type = (response.headers.get('content-type') ?? '').toLowerCase();
  if (!response.ok) {
    await response.body?.cancel().catch(() => undefined);
    return { ok: false, problem: `the url answered HTTP ${response.status}` };
  }
  if (!type.startsWith('text/')) {
    await response.body?.cancel().catch(() => undefined);
    const what = type.startsWith('audio/') || type.startsWith('video/') ? 'audio' : type || 'no content type';
    return { ok: false, problem: `the url points at ${what}, not a plain-text document` };
  }
  if (Number(response.headers.get('content-length') ?? 0) > MAX_REMOTE_BYTES) {
    await response.body?.cancel().catch(() => undefined);
    return { ok: false, problem: `the document is over ${MAX_REMOTE_BYTES} bytes` };
  }
  const bytes = Buffer.from(await response.arrayBuffer());
  if (bytes.length > MAX_REMOTE_BYTES)
    return { ok: false, problem: `the document is over ${MAX_REMOTE_BYTES} bytes` };
  return { ok: true, text: bytes.toString('utf8') };
}

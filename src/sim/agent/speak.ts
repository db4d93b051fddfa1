// POST /v1/speak and POST /v2/speak, the batch text-to-speech endpoints, with the service's rules
// (docs/protocols/speech-service.md sections 6, 7, 10 and 11):
//   - /v1/speak serves `lyric-` voices only (`model` optional, a `lyric-` English default);
//     /v2/speak needs `model` and serves `turn-` voices only, a `lyric-` one is rejected;
//   - `encoding` one of the named ones, `speed` in its version's range (v1: lyric-2 English and
//     Spanish voices only);
//   - the body is JSON `{"text": …}`, the text non-empty.
// Audio is deterministic: a bundled phrase when the text is one, otherwise placeholder speech as
// long as the words (placeholder-speech.ts). Raw μ-law and A-law come at 8 kHz, linear16 at 24 kHz;
// with `container=wav` the header says so. The local service renders raw encodings only: the
// compressed ones answer 501. It answers inline, so `callback` answers 501 too.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AudioFormat } from '../../audio/codec.js';
import { writeWavEncoded } from '../../audio/wav-writer.js';
import {
  RAW_SPEAK_ENCODINGS,
  SPEAK_ENCODINGS,
  speakSpeedProblem,
  type SpeakVersion,
} from '../../config/speak-rules.js';
import { type AuthPolicy, authorize } from './auth.js';
import { codedError, type ErrorBody, errorBody, sendAudio, sendJson } from './http-replies.js';
import type { PhraseBook } from './phrases.js';
import { readBody, readQuery } from './request-body.js';

export const SPEAK_V1_PATH = '/v1/speak';
export const SPEAK_V2_PATH = '/v2/speak';

/** The `lyric-` English voice /v1/speak uses when no model is named. */
export const DEFAULT_LYRIC_VOICE = 'lyric-2-andromeda-en';

const V1_QUERY = ['model', 'encoding', 'container', 'bit_rate', 'speed'] as const;
// 4.4 names these for the batch path; `speed` is a version 2 speak limit (8).
const V2_QUERY = [
  'model',
  'encoding',
  'container',
  'bit_rate',
  'callback',
  'callback_method',
  'priority',
  'speed',
];
const CONTAINERS = ['none', 'wav'];
const MAX_BODY_BYTES = 64 * 1024;
/** Characters one request may ask to speak. */
export const MAX_SPEAK_CHARS = 2000;

type RawEncoding = (typeof RAW_SPEAK_ENCODINGS)[number];

/** What each raw encoding is rendered at. */
export function speakFormat(encoding: RawEncoding): AudioFormat {
  return { encoding, sampleRate: encoding === 'linear16' ? 24_000 : 8000 };
}

export interface SpeakRequest {
  model: string;
  encoding: RawEncoding;
  container: 'none' | 'wav';
  speed?: number;
}

export type Refusal = { status: number; body: ErrorBody };
type Checked = { ok: true; request: SpeakRequest } | ({ ok: false } & Refusal);

const bad = (message: string): { ok: false } & Refusal => ({
  ok: false,
  status: 400,
  body: codedError('INVALID_QUERY_PARAMETER', message),
});

/** The batch query rules of one version; the first problem as an HTTP refusal. */
export function checkBatchQuery(version: SpeakVersion, search: URLSearchParams): Checked {
  const query = readQuery(search, version === 'v1' ? V1_QUERY : V2_QUERY);
  if (!query.ok) return bad(query.problem);
  const values = query.values;
  const model = checkModel(version, values.get('model'));
  if (typeof model !== 'string') return model;
  const encoding = values.get('encoding') ?? 'linear16';
  if (!(SPEAK_ENCODINGS as readonly string[]).includes(encoding)) {
    return bad(
      `encoding must be one of ${SPEAK_ENCODINGS.join(', ')}, got ${JSON.stringify(encoding.slice(0, 20))}`,
    );
  }
  if (!(RAW_SPEAK_ENCODINGS as readonly string[]).includes(encoding)) {
    return {
      ok: false,
      status: 501,
      body: errorBody(501, `the local speech service does not render ${encoding}`),
    };
  }
  const container = values.get('container') ?? 'none';
  if (!CONTAINERS.includes(container)) return bad(`container must be none or wav for ${encoding}`);
  if (values.has('callback') || values.has('callback_method')) {
    return {
      ok: false,
      status: 501,
      body: errorBody(501, 'the local speech service answers inline, not by callback'),
    };
  }
  const bitRate = values.get('bit_rate');
  if (bitRate !== undefined && !/^\d{1,7}$/.test(bitRate)) return bad('bit_rate must be a whole number');
  const request: SpeakRequest = {
    model,
    encoding: encoding as RawEncoding,
    container: container as 'none' | 'wav',
  };
  const speed = values.get('speed');
  if (speed !== undefined) {
    const problem = speedProblem(version, model, speed);
    if (problem !== null) return bad(`speed ${problem}`);
    request.speed = Number(speed);
  }
  return { ok: true, request };
}

/** speech-service.md sections 3 and 7: v2 needs a `turn-` model and rejects `lyric-`; v1 serves `lyric-` only. */
export function checkModel(
  version: SpeakVersion,
  model: string | undefined,
): string | ({ ok: false } & Refusal) {
  if (version === 'v1') {
    const chosen = model ?? DEFAULT_LYRIC_VOICE;
    if (chosen.startsWith('turn-')) return bad('turn- voices are served on /v2/speak only');
    if (!/^lyric-[a-z0-9-]+$/i.test(chosen))
      return bad(`model must be a lyric- voice, got ${JSON.stringify(chosen.slice(0, 60))}`);
    return chosen;
  }
  if (model === undefined || model === '') return bad('model is required');
  if (model.startsWith('lyric-')) return bad('lyric- voices are served on /v1/speak only');
  if (!/^turn-[a-z0-9]+(-[a-z0-9]+)+$/i.test(model)) {
    return bad(`model must be turn-<voice>-<language>, got ${JSON.stringify(model.slice(0, 60))}`);
  }
  return model;
}

export function speedProblem(version: SpeakVersion, model: string, raw: string): string | null {
  if (!/^\d+(\.\d+)?$/.test(raw)) return 'must be a number';
  return speakSpeedProblem(version, model, Number(raw));
}

export async function handleSpeak(
  version: SpeakVersion,
  req: IncomingMessage,
  res: ServerResponse,
  auth: AuthPolicy,
  phrases: PhraseBook,
): Promise<void> {
  if (req.method !== 'POST') {
    res.setHeader('allow', 'POST');
    return sendJson(res, 405, errorBody(405, `/${version}/speak takes POST (or a WebSocket on /v2/speak)`));
  }
  const check = authorize(req.headers.authorization, auth);
  if (!check.ok) return sendJson(res, 401, errorBody(401, check.reason));
  const checked = checkBatchQuery(version, new URL(req.url ?? '/', 'http://localhost').searchParams);
  if (!checked.ok) return sendJson(res, checked.status, checked.body);

  const raw = await readBody(req, MAX_BODY_BYTES);
  if (raw === undefined) return sendJson(res, 413, errorBody(413, `body over ${MAX_BODY_BYTES} bytes`));
  let text: unknown;
  try {
    text = (JSON.parse(raw) as { text?: unknown } | null)?.text;
  } catch {
    return sendJson(res, 400, errorBody(400, 'the body must be JSON {"text": …}'));
  }
  // speech-service.md section 9: empty text is a 400.
  if (typeof text !== 'string' || text.trim() === '')
    return sendJson(res, 400, errorBody(400, 'text must not be empty'));
  if (text.length > MAX_SPEAK_CHARS) {
    return sendJson(res, 400, errorBody(400, `text must be at most ${MAX_SPEAK_CHARS} characters`));
  }

  const { request } = checked;
  const format = speakFormat(request.encoding);
  const audio = phrases.render(await phrases.speak(text), format);
  if (request.container === 'wav')
    return sendAudio(res, 'audio/wav', writeWavEncoded(audio, format.encoding, format.sampleRate));
  sendAudio(res, rawContentType(format), audio);
}

function rawContentType(format: AudioFormat): string {
  switch (format.encoding) {
    case 'mulaw':
      return 'audio/basic';
    case 'alaw':
      return 'audio/x-alaw-basic';
    case 'linear16':
      return `audio/l16; rate=${format.sampleRate}`;
  }
}

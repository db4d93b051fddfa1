// The text intelligence endpoint, `POST /v1/read` (docs/protocols/speech-service.md section 5):
// `language` (required, English only), `summarize=v2`, `sentiment`, `topics`, `intents`, and a body
// with exactly one of `text` or `url` (we always send `text`). The answer is read tolerantly:
// `results.summary.text` and `results.sentiments` are the reference's; where topics and intents sit is
// not specified, so the segment lists the service is known for are read when present.
import { SpeechServiceError } from '../errors.js';
import { type SpeechApi, speechRequest } from './http.js';

export const READ_PATH = '/v1/read';
const MAX_ANSWER_BYTES = 1024 * 1024;
/** Topics and intents kept per call: enough to describe it, bounded for the record. */
const MAX_LABELS = 10;
const MAX_SUMMARY_CHARS = 2000;

/** speech-service.md section 5: `en` and regional English (`en-US`, echoed as `en`); `multi` and the rest are refused. */
const ACCEPTED_LANGUAGE = /^en(-[A-Za-z]{2,8})?$/;

export type LanguageCheck = { ok: true; language: string } | { ok: false; reason: string };

/** Whether text in a profile's language may be sent at all: a refused one is never sent. */
export function analysisLanguage(profileLanguage: string): LanguageCheck {
  if (ACCEPTED_LANGUAGE.test(profileLanguage)) return { ok: true, language: profileLanguage };
  return {
    ok: false,
    reason: `language ${JSON.stringify(profileLanguage.slice(0, 35))} is not accepted by the text intelligence endpoint (English only)`,
  };
}

export interface ReadResult {
  language?: string;
  summary?: string;
  sentiment?: string;
  sentimentScore?: number;
  topics: string[];
  intents: string[];
}

export async function readText(
  api: SpeechApi,
  input: { language: string; text: string },
  signal?: AbortSignal,
): Promise<ReadResult> {
  const answer = await speechRequest(api, {
    method: 'POST',
    path: READ_PATH,
    query: { language: input.language, summarize: 'v2', sentiment: 'true', topics: 'true', intents: 'true' },
    json: { text: input.text },
    maxBytes: MAX_ANSWER_BYTES,
    ...(signal ? { signal } : {}),
  });
  let body: unknown;
  try {
    body = JSON.parse(answer.body.toString('utf8'));
  } catch {
    // A 2xx that is not JSON is the service's trouble, not the request's: try again later.
    throw new SpeechServiceError(`POST ${READ_PATH}: the answer is not JSON`, { retryable: true });
  }
  return readAnswer(body);
}

/** The parts of an answer the call record keeps; anything missing or odd is left out. */
export function readAnswer(body: unknown): ReadResult {
  const results = field(body, 'results');
  const result: ReadResult = { topics: [], intents: [] };
  const language = field(field(body, 'metadata'), 'language');
  if (typeof language === 'string') result.language = language.slice(0, 35);
  const summary = field(field(results, 'summary'), 'text');
  if (typeof summary === 'string') result.summary = summary.slice(0, MAX_SUMMARY_CHARS);
  const sentiments = field(results, 'sentiments');
  const average = field(sentiments, 'average') ?? sentiments;
  const sentiment = field(average, 'sentiment');
  if (typeof sentiment === 'string') result.sentiment = sentiment.slice(0, 32);
  const score = field(average, 'sentiment_score');
  if (typeof score === 'number' && Number.isFinite(score)) result.sentimentScore = score;
  result.topics = labels(field(results, 'topics'), 'topics', 'topic');
  result.intents = labels(field(results, 'intents'), 'intents', 'intent');
  return result;
}

/** `{segments: [{<list>: [{<key>: "…"}]}]}`, or a plain list of strings or such objects. */
function labels(section: unknown, list: string, key: string): string[] {
  const found: string[] = [];
  const add = (entry: unknown) => {
    const label = typeof entry === 'string' ? entry : field(entry, key);
    if (typeof label === 'string' && label.trim() !== '' && !found.includes(label))
      found.push(label.slice(0, 100));
  };
  const segments = field(section, 'segments');
  if (Array.isArray(segments)) {
    for (const segment of segments) {
      const entries = field(segment, list);
      if (Array.isArray(entries)) entries.forEach(add);
    }
  } else if (Array.isArray(section)) {
    section.forEach(add);
  }
  return found.slice(0, MAX_LABELS);
}

function field(value: unknown, name: string): unknown {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)[name]
    : undefined;
}

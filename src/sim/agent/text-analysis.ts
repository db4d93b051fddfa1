// What the local text intelligence endpoint answers: a summary, sentiment, topics and intents
// worked out from the words alone, so the same text always gives the same result. No model: short
// word lists stand in for one. The answer's shape beyond `results.summary.text` and
// `results.sentiments` is ours (docs/protocols/speech-service.md section 5: "Response fields other than those in section 2:
// not shown"), modelled on segments with an `average`.

export interface ReadFeatures {
  summarize: boolean;
  sentiment: boolean;
  topics: boolean;
  intents: boolean;
}

const POSITIVE = new Set(
  'thanks thank great good perfect wonderful happy glad love excellent helpful appreciate nice fine sure yes brilliant pleased'.split(
    ' ',
  ),
);
const NEGATIVE = new Set(
  'not no never bad terrible awful angry upset problem broken late wrong complaint cancel refund disappointed unhappy worst unavailable sorry'.split(
    ' ',
  ),
);

/** Keyword → topic; the first topics whose words appear, in this order. */
const TOPICS: ReadonlyArray<readonly [RegExp, string]> = [
  [/\b(order|orders|delivery|shipping|ships|package|parcel)\b/, 'order status'],
  [/\b(appointment|booking|book|schedule|reschedule)\b/, 'appointments'],
  [/\b(price|pricing|cost|plan|plans|subscription|seats)\b/, 'pricing'],
  [/\b(bill|billing|invoice|payment|charge|refund)\b/, 'billing'],
  [/\b(hours|open|address|location|directions)\b/, 'opening hours and location'],
  [/\b(emergency|pain|urgent)\b/, 'emergencies'],
];

/** Keyword → intent, as a caller would state it. */
const INTENTS: ReadonlyArray<readonly [RegExp, string]> = [
  [
    /\b(where is|check|status of|track)\b.*\b(order|package|delivery)\b|\b(order|package)\b.*\b(status|where)\b/,
    'check order status',
  ],
  [/\b(book|schedule|make)\b.*\b(appointment|booking)\b|\bappointment\b/, 'book an appointment'],
  [/\b(cancel)\b/, 'cancel a service'],
  [/\b(refund|money back)\b/, 'get a refund'],
  [/\b(speak to|talk to|transfer|a person|human)\b/, 'speak to a person'],
  [/\b(how much|price|cost)\b/, 'ask about pricing'],
  [/\b(help|question)\b/, 'get help'],
];

export function analyzeText(text: string, features: ReadFeatures): Record<string, unknown> {
  const results: Record<string, unknown> = {};
  const sentences = splitSentences(text);
  const lower = text.toLowerCase();
  if (features.summarize) results.summary = { text: summarize(sentences) };
  if (features.sentiment) {
    const segments = sentences.map((sentence) => ({ text: sentence, ...sentimentOf(sentence) }));
    results.sentiments = { segments, average: sentimentOf(text) };
  }
  if (features.topics) {
    const topics = matches(lower, TOPICS).map((topic) => ({ topic, confidence_score: 0.9 }));
    results.topics = { segments: topics.length > 0 ? [{ text: sentences[0] ?? '', topics }] : [] };
  }
  if (features.intents) {
    const intents = matches(lower, INTENTS).map((intent) => ({ intent, confidence_score: 0.85 }));
    results.intents = { segments: intents.length > 0 ? [{ text: sentences[0] ?? '', intents }] : [] };
  }
  return results;
}

function splitSentences(text: string): string[] {
  return text
    .split(/(?<=[.!?])\s+|\n+/)
    .map((s) => s.trim())
    .filter((s) => s !== '');
}

/** The first sentence and, when there are more, the last: how the conversation opened and closed. */
function summarize(sentences: string[]): string {
  const strip = (s: string) => s.replace(/^(caller|agent|user|assistant):\s*/i, '');
  const first = sentences[0];
  if (first === undefined) return '';
  const last = sentences.length > 1 ? sentences.at(-1) : undefined;
  const summary = last === undefined ? strip(first) : `${strip(first)} … ${strip(last)}`;
  return summary.length > 300 ? `${summary.slice(0, 297)}...` : summary;
}

function sentimentOf(text: string): { sentiment: string; sentiment_score: number } {
  let positive = 0;
  let negative = 0;
  for (const word of text.toLowerCase().match(/[a-z']+/g) ?? []) {
    if (POSITIVE.has(word)) positive++;
    if (NEGATIVE.has(word)) negative++;
  }
  const score = positive + negative === 0 ? 0 : (positive - negative) / (positive + negative);
  const rounded = Math.round(score * 1000) / 1000;
  const sentiment = rounded > 0.2 ? 'positive' : rounded < -0.2 ? 'negative' : 'neutral';
  return { sentiment, sentiment_score: rounded };
}

function matches(lower: string, table: ReadonlyArray<readonly [RegExp, string]>): string[] {
  return table.filter(([pattern]) => pattern.test(lower)).map(([, label]) => label);
}

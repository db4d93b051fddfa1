// What the local text intelligence endpoint answers: a summary, sentiment, topics and intents
// worked out from the words alone, so the same text always gives the same result. No model: the
// whole conversation is read line by line (`Caller:` and `Agent:`, as src/speech/transcript.ts
// writes it). Sentiment is the caller's, scored with the AFINN word list of the `sentiment`
// package: the agent's courtesy says nothing of how the call went, and a call where the caller
// said nothing readable (a voicemail, a simulated caller) is neutral, not a guess. The answer's
// shape beyond `results.summary.text` and `results.sentiments` is ours (docs/protocols/speech-service.md
// section 5: "Response fields other than those in section 2: not shown"), modelled on segments with an `average`.
import Sentiment from 'sentiment';

export interface ReadFeatures {
  summarize: boolean;
  sentiment: boolean;
  topics: boolean;
  intents: boolean;
}

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

const scorer = new Sentiment();

interface Line {
  speaker: 'caller' | 'agent' | null;
  text: string;
}

/** A simulated caller's turn has no words, only its length: "(caller spoke for 2.6 s)". */
const WORDLESS = /^\(caller spoke for [\d.]+ s\)$/;

export function analyzeText(text: string, features: ReadFeatures): Record<string, unknown> {
  const results: Record<string, unknown> = {};
  const lines = readLines(text);
  const labelled = lines.some((line) => line.speaker !== null);
  // What the caller said, when the text says who spoke; otherwise all of it.
  const callerWords = lines
    .filter((line) => (labelled ? line.speaker === 'caller' : true))
    .map((line) => line.text)
    .filter((said) => !WORDLESS.test(said));
  const callerText = callerWords.join(' ');
  const lower = callerText.toLowerCase();
  if (features.summarize) results.summary = { text: summarize(lines, labelled, lower) };
  if (features.sentiment) {
    const segments = callerWords
      .flatMap(splitSentences)
      .map((sentence) => ({ text: sentence, ...sentimentOf(sentence) }));
    results.sentiments = { segments, average: sentimentOf(callerText) };
  }
  const first = callerWords[0] ?? '';
  if (features.topics) {
    const topics = matches(lower, TOPICS).map((topic) => ({ topic, confidence_score: 0.9 }));
    results.topics = { segments: topics.length > 0 ? [{ text: first, topics }] : [] };
  }
  if (features.intents) {
    const intents = matches(lower, INTENTS).map((intent) => ({ intent, confidence_score: 0.85 }));
    results.intents = { segments: intents.length > 0 ? [{ text: first, intents }] : [] };
  }
  return results;
}

/** Lines with their speaker; a line without a label continues the last speaker's. */
function readLines(text: string): Line[] {
  const lines: Line[] = [];
  let speaker: Line['speaker'] = null;
  for (const raw of text.split(/\n+|(?=\b(?:caller|user|agent|assistant):)/i)) {
    const labelled = /^\s*(caller|user|agent|assistant)\s*:\s*(.*)$/i.exec(raw);
    if (labelled) speaker = /^(caller|user)$/i.test(labelled[1]!) ? 'caller' : 'agent';
    const said = (labelled ? labelled[2]! : raw).trim();
    if (said !== '') lines.push({ speaker, text: said });
  }
  return lines;
}

function splitSentences(text: string): string[] {
  return text
    .split(/(?<=[.!?])\s+/)
    .map((s) => s.trim())
    .filter((s) => s !== '');
}

const quote = (text: string, max = 90) => `"${text.length > max ? `${text.slice(0, max - 1)}…` : text}"`;

/**
 * What happened over the whole call, in a few sentences: what the caller wanted (or that nothing
 * they said could be read), and what the agent said first and last.
 */
function summarize(lines: Line[], labelled: boolean, callerLower: string): string {
  if (lines.length === 0) return '';
  if (!labelled) {
    const sentences = lines.flatMap((line) => splitSentences(line.text));
    const first = sentences[0]!;
    const last = sentences.length > 1 ? sentences.at(-1) : undefined;
    return last === undefined ? first : `${first} … ${last}`;
  }
  const caller = lines.filter((line) => line.speaker === 'caller');
  const agent = lines.filter((line) => line.speaker === 'agent');
  const heard = caller.filter((line) => !WORDLESS.test(line.text));
  const parts: string[] = [];
  if (caller.length === 0) parts.push('The caller did not speak.');
  else if (heard.length === 0) {
    parts.push(`The caller spoke ${times(caller.length)}, with no words the analysis could read.`);
  } else {
    const wants = matches(callerLower, INTENTS);
    const about = matches(callerLower, TOPICS);
    const gist =
      wants.length > 0
        ? `wanted to ${wants.join(' and ')}`
        : `said ${quote(heard.reduce((a, b) => (b.text.length > a.text.length ? b : a)).text)}`;
    parts.push(ended(`The caller ${gist}${about.length > 0 ? ` (${about.join(', ')})` : ''}`));
  }
  if (agent.length === 1) parts.push(ended(`The agent said ${quote(agent[0]!.text)}`));
  else if (agent.length > 1) {
    parts.push(
      ended(
        `The agent spoke ${times(agent.length)}, opening with ${quote(agent[0]!.text)} and closing with ${quote(agent.at(-1)!.text)}`,
      ),
    );
  }
  return parts.join(' ');
}

/** A full stop, unless a quotation that closes the sentence already ends with one. */
function ended(sentence: string): string {
  return /[.!?…]"$/.test(sentence) ? sentence : `${sentence}.`;
}

function times(count: number): string {
  return count === 1 ? 'once' : count === 2 ? 'twice' : `${count} times`;
}

/**
 * AFINN scores words from -5 to 5; the score is their sum brought into -1..1 (tanh), so one mild
 * word is a mild score and no scored word at all is 0, neutral.
 */
function sentimentOf(text: string): { sentiment: string; sentiment_score: number } {
  const { score } = scorer.analyze(text);
  const rounded = Math.round(Math.tanh(score / 4) * 1000) / 1000;
  const sentiment = rounded >= 0.25 ? 'positive' : rounded <= -0.25 ? 'negative' : 'neutral';
  return { sentiment, sentiment_score: rounded };
}

function matches(lower: string, table: ReadonlyArray<readonly [RegExp, string]>): string[] {
  return table.filter(([pattern]) => pattern.test(lower)).map(([, label]) => label);
}

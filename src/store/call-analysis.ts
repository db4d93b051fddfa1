// What post-call analysis adds to a call's record (the `analysis` field), and how it reads in a
// CSV column or an event: the one place that says what an analysis looks like to its readers.

export type AnalysisOutcome = 'ok' | 'skipped' | 'failed';

export interface CallAnalysis {
  /** `ok`: analysed; `skipped`: never sent (reason says why); `failed`: sent and refused or given up. */
  outcome: AnalysisOutcome;
  reason?: string;
  /** `results.summary.text` of the text intelligence endpoint. */
  summary?: string;
  /** `positive`, `neutral` or `negative`, as the service labels the whole text. */
  sentiment?: string;
  /** -1 (negative) to 1 (positive), when the service gives one. */
  sentimentScore?: number;
  topics?: string[];
  intents?: string[];
  /** The language the service analysed in (it echoes `en` for `en-US`). */
  language?: string;
  /** Requests made, the successful one included. */
  attempts: number;
  /** The transcript was cut to the analysis bound before it was sent. */
  truncated?: boolean;
  /** ISO 8601: when the outcome was reached. */
  at: string;
}

/** Flat text fields for a results CSV or an operator event; empty strings where there is nothing. */
export interface FormattedAnalysis {
  analysis: AnalysisOutcome | '';
  summary: string;
  sentiment: string;
  topics: string;
  intents: string;
}

/** How an analysis reads as columns (`summary` in the campaign results CSV) or event fields. */
export function formatAnalysis(analysis: CallAnalysis | undefined | null): FormattedAnalysis {
  if (!analysis) return { analysis: '', summary: '', sentiment: '', topics: '', intents: '' };
  return {
    analysis: analysis.outcome,
    summary: analysis.summary ?? '',
    sentiment: analysis.sentiment ?? '',
    topics: (analysis.topics ?? []).join('; '),
    intents: (analysis.intents ?? []).join('; '),
  };
}

// What post-call analysis adds to a call's record (the `analysis` field), and how it reads in a
// CSV column or an event: the one place that says what an analysis looks like to its readers.

import type { CallAnalysis } from '../api/calls.js';
export type { CallAnalysis } from '../api/calls.js';

export type AnalysisOutcome = CallAnalysis['outcome'];

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

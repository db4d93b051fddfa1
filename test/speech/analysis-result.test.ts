// How an analysis reads in a results CSV column or an operator event (formatAnalysis).
import { describe, expect, it } from 'vitest';
import { formatAnalysis } from '../../src/store/call-analysis.js';

describe('formatAnalysis', () => {
  it('flattens an analysis into text fields', () => {
    expect(
      formatAnalysis({
        outcome: 'ok',
        attempts: 1,
        summary: 'Asked about order W-1; it ships tomorrow.',
        sentiment: 'positive',
        sentimentScore: 0.5,
        topics: ['order status', 'shipping'],
        intents: ['check order status'],
        at: '2026-01-01T00:00:00.000Z',
      }),
    ).toEqual({
      analysis: 'ok',
      summary: 'Asked about order W-1; it ships tomorrow.',
      sentiment: 'positive',
      topics: 'order status; shipping',
      intents: 'check order status',
    });
  });

  it('gives empty fields for a call not analysed, skipped or failed', () => {
    const empty = { summary: '', sentiment: '', topics: '', intents: '' };
    expect(formatAnalysis(undefined)).toEqual({ analysis: '', ...empty });
    expect(formatAnalysis(null)).toEqual({ analysis: '', ...empty });
    expect(
      formatAnalysis({ outcome: 'skipped', reason: 'nothing was said on the call', attempts: 0, at: 'x' }),
    ).toEqual({
      analysis: 'skipped',
      ...empty,
    });
  });
});

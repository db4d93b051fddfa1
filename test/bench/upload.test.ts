// The upload benchmark's own parts: the CSV it uploads has every phone and about the size asked
// for, and a bad option is a usage error before any server is started.
import { parse } from 'csv-parse/sync';
import { describe, expect, it } from 'vitest';
import { benchPhones } from '../../src/bench/campaign.js';
import { uploadBenchCommand, uploadCsv } from '../../src/bench/upload.js';

describe('callbridge bench upload', () => {
  it('uploads every phone once, in a CSV of about the size asked for', () => {
    const phones = benchPhones(2_000, 'plan');
    const bytes = 400 * 1024;
    const csv = uploadCsv(phones, bytes);
    expect(Math.abs(Buffer.byteLength(csv) - bytes) / bytes).toBeLessThan(0.05);
    const rows = parse(csv) as string[][];
    expect(rows[0]).toEqual(['phone', 'first_name', 'company', 'note']);
    expect(new Set(rows.slice(1).map((row) => row[0])).size).toBe(2_000);
  });

  it.each([['--mb', '0'], ['--mb', '16'], ['--budget-ms', '-1'], ['--nope']])(
    'refuses %s %s as a usage error',
    async (...args) => {
      expect(await uploadBenchCommand(args.filter((a): a is string => a !== undefined))).toBe(2);
    },
  );
});

// A large upload never holds the event loop for its whole length: contacts (CSV and JSON) and
// do-not-call lists are parsed, validated and stored in slices, and a callback queued while one is
// being read runs before the reading ends. Ordering, not timing, is what is asserted.
import { describe, expect, it } from 'vitest';
import { contactsFromCsv, contactsFromJson } from '../../src/outbound/contacts-import.js';
import { addInBatches, dncFromCsv, dncFromJson } from '../../src/outbound/dnc-import.js';
import { parseCsvInSlices } from '../../src/outbound/slices.js';

const context = { campaignTimezone: 'America/New_York', required: new Map() };
const phones = Array.from({ length: 3000 }, (_, i) => `+1212555${String(i).padStart(4, '0')}`);
const csv = `phone,name\n${phones.map((phone, i) => `${phone},Name ${i}`).join('\n')}\n`;

/** What ran first: a callback queued on the event loop now, or `work` to its end. */
async function firstOf(work: () => Promise<unknown>): Promise<string[]> {
  const order: string[] = [];
  const running = work().then(() => order.push('finished'));
  setImmediate(() => order.push('queued callback'));
  await running;
  return order;
}

describe('uploads read in slices', () => {
  it.each([
    ['a contacts CSV', () => contactsFromCsv(csv, context)],
    [
      'a contacts JSON array',
      () =>
        contactsFromJson(
          phones.map((phone) => ({ phone })),
          context,
        ),
    ],
    ['a do-not-call CSV', () => dncFromCsv(csv)],
    ['a do-not-call JSON list', () => dncFromJson({ numbers: phones })],
    ['the do-not-call list stored in batches', () => addInBatches(phones, async (batch) => batch.length)],
  ])('%s lets a queued callback run before it finishes', async (_, work) => {
    expect(await firstOf(work)).toEqual(['queued callback', 'finished']);
  });

  it('reads the same records as one parse would, across slice boundaries', async () => {
    const quoted = `a,b\n${Array.from({ length: 2000 }, (_, i) => `"multi\nline ${i}","x,${i}"`).join('\n')}\n`;
    const records = await parseCsvInSlices<string[]>(quoted, { relax_column_count: true });
    expect(records).toHaveLength(2001);
    expect(records[1999]).toEqual(['multi\nline 1998', 'x,1998']);
  });

  it('stops at the row limit it is given, whatever follows', async () => {
    const records = await parseCsvInSlices<string[]>(csv, { to: 10 });
    expect(records).toHaveLength(10);
  });
});

describe('a broken upload read in slices', () => {
  it('refuses it with the parser error, and leaves no unhandled rejection behind', async () => {
    // Invariant: a malformed upload is a 400, never an unhandled rejection (which ends the process).
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown) => unhandled.push(reason);
    process.on('unhandledRejection', onUnhandled);
    try {
      const broken = `phone,name\n"+12125550100"x,Ada\n${'+12125550101,Alan\n'.repeat(5_000)}`;
      await expect(contactsFromCsv(broken, context)).rejects.toThrow(
        'contacts CSV: a closing quote is followed by text at line 2',
      );
      // Node reports an unhandled rejection before the next macrotask: the slices' yields came after it.
      expect(unhandled).toEqual([]);
    } finally {
      process.off('unhandledRejection', onUnhandled);
    }
  });
});

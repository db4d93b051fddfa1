import { describe, expect, it } from 'vitest';
import { type ReorderOutcome, SequenceReorder } from '../../../src/carriers/telnyx/reorder.js';

function window(maxHeld = 3) {
  const outcomes: ReorderOutcome[] = [];
  return { reorder: new SequenceReorder<number>(maxHeld, (o) => outcomes.push(o)), outcomes };
}

const due = (result: ReturnType<SequenceReorder<number>['push']>) =>
  result.kind === 'due' ? result.items : result.kind;

describe('sequence reorder window', () => {
  it('passes frames in order straight through', () => {
    const { reorder, outcomes } = window();
    expect([10, 11, 12].map((s) => due(reorder.push(s, s)))).toEqual([[10], [11], [12]]);
    expect(outcomes).toEqual([]);
    expect(reorder.heldCount).toBe(0);
  });

  it('fills a gap of several frames in any order', () => {
    const { reorder } = window();
    reorder.push(1, 1);
    expect(due(reorder.push(4, 4))).toEqual([]);
    expect(due(reorder.push(3, 3))).toEqual([]);
    expect(due(reorder.push(2, 2))).toEqual([2, 3, 4]);
    expect(reorder.heldCount).toBe(0);
  });

  it('never holds more than its window', () => {
    const { reorder, outcomes } = window(2);
    reorder.push(1, 1);
    expect(due(reorder.push(3, 3))).toEqual([]);
    expect(due(reorder.push(4, 4))).toEqual([]);
    expect(due(reorder.push(5, 5))).toEqual([3, 4, 5]);
    expect(outcomes).toEqual(['gap', 'reordered', 'reordered', 'reordered']);
    expect(due(reorder.push(2, 2))).toBe('late');
  });

  it('releases only the consecutive run after a skipped gap, keeping later gaps open', () => {
    const { reorder } = window(2);
    reorder.push(1, 1);
    reorder.push(3, 3);
    reorder.push(6, 6);
    expect(due(reorder.push(7, 7))).toEqual([3]);
    expect(reorder.heldCount).toBe(2);
    expect(due(reorder.push(4, 4))).toEqual([4]);
    expect(due(reorder.push(5, 5))).toEqual([5, 6, 7]);
  });

  it('flushes what it holds in order', () => {
    const { reorder } = window();
    reorder.push(1, 1);
    reorder.push(5, 5);
    reorder.push(3, 3);
    expect(reorder.flush()).toEqual([3, 5]);
    expect(reorder.heldCount).toBe(0);
    expect(due(reorder.push(6, 6))).toEqual([6]);
  });

  it('resynchronises on a jump in either direction, releasing what it held first', () => {
    const outcomes: ReorderOutcome[] = [];
    const reorder = new SequenceReorder<number>(3, (o) => outcomes.push(o), 10);
    reorder.push(1, 1);
    reorder.push(3, 3);
    expect(due(reorder.push(500, 500))).toEqual([3, 500]);
    expect(due(reorder.push(501, 501))).toEqual([501]);
    expect(due(reorder.push(4, 4))).toEqual([4]);
    expect(due(reorder.push(5, 5))).toEqual([5]);
    expect(outcomes).toEqual(['resync', 'reordered', 'resync']);
  });
});

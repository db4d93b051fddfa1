// The bench's byte accounting: a receiver counts exactly the frames that arrived intact, in order
// or not, and flags anything else, so `bytesLost` and `bytesReordered` can be trusted at zero.
import { describe, expect, it } from 'vitest';
import {
  DOWNLINK_MAGIC,
  FLAG_BURST_START,
  FRAME_BYTES,
  frameTemplate,
  StreamVerifier,
  UPLINK_MAGIC,
  writeFrame,
} from '../../src/bench/frames.js';
import { summarize } from '../../src/bench/samples.js';

function frames(call: number, seqs: number[], magic = UPLINK_MAGIC): Buffer {
  const template = frameTemplate(call);
  const out = Buffer.alloc(seqs.length * FRAME_BYTES);
  seqs.forEach((seq, i) => {
    writeFrame(out, i * FRAME_BYTES, template, magic, call, seq, 1000 + seq, i === 0 ? FLAG_BURST_START : 0);
  });
  return out;
}

describe('StreamVerifier', () => {
  it('checks frames of any format: 640 bytes of 16-bit PCM at 16 kHz', () => {
    const frameBytes = 640;
    const template = frameTemplate(3, frameBytes);
    const out = Buffer.alloc(3 * frameBytes);
    for (const seq of [0, 1, 2]) writeFrame(out, seq * frameBytes, template, DOWNLINK_MAGIC, 3, seq, 1000, 0);
    // One byte changed in the second frame's filler: that frame is damage, the others count.
    out.writeUInt8(out.readUInt8(frameBytes + 300) ^ 0xff, frameBytes + 300);
    const verifier = new StreamVerifier(DOWNLINK_MAGIC, 3, frameBytes);
    const seen: number[] = [];
    verifier.push(out, (seq) => seen.push(seq));
    expect(seen).toEqual([0, 2]);
    expect(verifier.tally.inOrderBytes).toBe(2 * frameBytes);
    expect(verifier.tally.corruptBytes).toBe(frameBytes);
  });

  it('accepts a stream split and joined at any byte, in order', () => {
    const verifier = new StreamVerifier(UPLINK_MAGIC, 7);
    const all = frames(7, [0, 1, 2, 3, 4]);
    const seen: number[] = [];
    for (const cut of [
      [0, 70],
      [70, 400],
      [400, 800],
    ]) {
      verifier.push(all.subarray(cut[0], cut[1]), (seq, sentAtMs) => {
        seen.push(seq);
        expect(sentAtMs).toBe(1000 + seq);
      });
    }
    expect(seen).toEqual([0, 1, 2, 3, 4]);
    expect(verifier.tally).toEqual({
      inOrderBytes: 800,
      reorderedBytes: 0,
      duplicateBytes: 0,
      corruptBytes: 0,
    });
    expect(verifier.pendingBytes).toBe(0);
  });

  it('counts a late frame as reordered and a repeated one as a duplicate', () => {
    const verifier = new StreamVerifier(UPLINK_MAGIC, 1);
    verifier.push(frames(1, [0, 2, 1, 2]), () => {});
    expect(verifier.tally).toEqual({
      inOrderBytes: 2 * FRAME_BYTES,
      reorderedBytes: FRAME_BYTES,
      duplicateBytes: FRAME_BYTES,
      corruptBytes: 0,
    });
  });

  it("flags another call's frames, the other direction's, damaged bytes, and resynchronises", () => {
    const verifier = new StreamVerifier(UPLINK_MAGIC, 1);
    const damaged = frames(1, [2]);
    damaged[100] = (damaged[100] ?? 0) ^ 0xff;
    const shifted = frames(1, [3, 4]).subarray(1); // a byte lost: frame 3 is short, frame 4 intact
    verifier.push(
      Buffer.concat([frames(1, [0]), frames(2, [1]), frames(1, [1], DOWNLINK_MAGIC), damaged, shifted]),
      () => {},
    );
    expect(verifier.tally.inOrderBytes).toBe(2 * FRAME_BYTES);
    expect(verifier.tally.corruptBytes).toBe(3 * FRAME_BYTES + FRAME_BYTES - 1);
  });

  it('learns its call from the first intact frame when it starts without one', () => {
    const verifier = new StreamVerifier(UPLINK_MAGIC, -1);
    verifier.push(Buffer.concat([frames(9, [0, 1]), frames(3, [2])]), () => {});
    expect(verifier.call).toBe(9);
    expect(verifier.tally.inOrderBytes).toBe(2 * FRAME_BYTES);
    // The scan holds the tail until more bytes could complete a frame: damaged either way.
    expect(verifier.tally.corruptBytes + verifier.pendingBytes).toBe(FRAME_BYTES);
  });
});

describe('summarize', () => {
  it('reports nearest-rank percentiles and null without samples', () => {
    const values = Array.from({ length: 100 }, (_, i) => i + 1);
    expect(summarize(values)).toEqual({
      count: 100,
      p50: 50,
      p99: 99,
      max: 100,
    });
    expect(summarize([])).toEqual({
      count: 0,
      p50: null,
      p99: null,
      max: null,
    });
  });
});

// What every recording store promises (src/recording/store.ts), run on the file store and the S3
// store alike (stores.test.ts): bytes read back as written, by range; sizes; removal; retention.
import { buffer } from 'node:stream/consumers';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { RecordingStore } from '../../src/recording/store.js';

export interface StoreFixture {
  store: RecordingStore;
  cleanup(): Promise<void>;
}

function bytes(n: number, seed: number): Buffer {
  const out = Buffer.allocUnsafe(n);
  for (let i = 0; i < n; i++) out[i] = (i * 31 + seed) & 0xff;
  return out;
}

async function record(store: RecordingStore, callSid: string, parts: Buffer[], expiresAtMs = 9e12) {
  const upload = store.begin(callSid, expiresAtMs);
  for (const part of parts) upload.write(part);
  await upload.end();
  return Buffer.concat(parts);
}

export function recordingStoreContract(name: string, make: () => Promise<StoreFixture>): void {
  describe(`recording store contract: ${name}`, () => {
    let fixture: StoreFixture;
    let store: RecordingStore;

    beforeEach(async () => {
      fixture = await make();
      store = fixture.store;
    });

    afterEach(async () => {
      await fixture.cleanup();
    });

    it('reads back what was written, whole and by range', async () => {
      const written = await record(store, 'CA-whole', [bytes(44, 1), bytes(70_000, 2), bytes(3, 3)]);
      expect(await store.size('CA-whole')).toBe(written.length);
      expect((await buffer(await store.read('CA-whole', 0, written.length - 1))).equals(written)).toBe(true);
      const part = await buffer(await store.read('CA-whole', 1000, 1999));
      expect(part.equals(written.subarray(1000, 2000))).toBe(true);
      const tail = await buffer(await store.read('CA-whole', written.length - 1, written.length - 1));
      expect([...tail]).toEqual([written.at(-1)]);
    });

    it('stores a recording longer than one upload part while it is written', async () => {
      const parts = Array.from({ length: 12 }, (_, i) => bytes(512 * 1024, i)); // 6 MiB
      const written = await record(store, 'CA-long', parts);
      expect(await store.size('CA-long')).toBe(written.length);
      const edge = 5 * 1024 * 1024;
      const around = await buffer(await store.read('CA-long', edge - 10, edge + 9));
      expect(around.equals(written.subarray(edge - 10, edge + 10))).toBe(true);
    });

    it('knows no recording it was never given', async () => {
      expect(await store.size('CA-none')).toBeNull();
      expect(await store.remove('CA-none')).toBe(false);
      expect(await store.size('../etc/passwd')).toBeNull();
    });

    it('refuses to store under a name that is not a call id', () => {
      for (const callSid of ['', '../x', 'a/b', '.hidden', 'x'.repeat(200)]) {
        expect(() => store.begin(callSid, 0)).toThrow(RangeError);
      }
    });

    it('removes a recording', async () => {
      await record(store, 'CA-gone', [bytes(100, 4)]);
      expect(await store.remove('CA-gone')).toBe(true);
      expect(await store.size('CA-gone')).toBeNull();
      expect(await store.remove('CA-gone')).toBe(false);
    });

    it('removes recordings once their retention has passed, and only those', async () => {
      await record(store, 'CA-early', [bytes(100, 5)], 1_000);
      await record(store, 'CA-late', [bytes(100, 6)], 5_000);
      expect(await store.removeExpired(999, 100)).toEqual([]);
      expect(await store.removeExpired(2_000, 100)).toEqual(['CA-early']);
      expect(await store.size('CA-early')).toBeNull();
      expect(await store.size('CA-late')).toBe(100);
      expect(await store.removeExpired(5_000, 100)).toEqual(['CA-late']);
      expect(await store.size('CA-late')).toBeNull();
      expect(await store.removeExpired(10_000, 100)).toEqual([]);
    });
  });
}

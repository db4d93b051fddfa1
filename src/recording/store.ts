// Where recordings are kept: one port, a file adapter and an S3 adapter (docs/recordings.md), one
// contract suite run on both (test/recording/store-contract.ts). A recording is written as it is
// made, byte after byte, and read back by range from any instance sharing the store.
import type { Readable } from 'node:stream';

/** A recording being written while its call runs. */
export interface RecordingUpload {
  /** Appends bytes. Never blocks the call; `pendingBytes` says how much waits to be stored. */
  write(bytes: Buffer): void;
  /** Rewrites the first bytes (the WAV header's sizes) where the store can; others ignore it. */
  rewriteStart(bytes: Buffer): void;
  /** Bytes accepted and not yet stored: the recorder gives up past a bound rather than grow. */
  readonly pendingBytes: number;
  /** Everything written is stored; the recording can be read. Rejects when it could not be. */
  end(): Promise<void>;
  /** Gives up: nothing more is written, what can be removed is. */
  abort(): Promise<void>;
}

export interface RecordingStore {
  readonly kind: 'file' | 's3';
  /** Starts the recording of `callSid`, to be removed after `expiresAtMs` (epoch milliseconds). */
  begin(callSid: string, expiresAtMs: number): RecordingUpload;
  /** The stored size in bytes, or null when there is no such recording. */
  size(callSid: string): Promise<number | null>;
  /** Bytes `start` to `end` inclusive (both within the size). */
  read(callSid: string, start: number, end: number): Promise<Readable>;
  /** Removes the recording; false when there was none. */
  remove(callSid: string): Promise<boolean>;
  /**
   * Removes up to `limit` recordings whose retention ended at or before `nowMs` (and what the store
   * kept to know it); returns their call ids.
   */
  removeExpired(nowMs: number, limit: number): Promise<string[]>;
  close(): Promise<void>;
}

/** A call id as a file or key name: what the admin API accepts for a call id (live-calls.ts). */
export function isStorableCallSid(callSid: string): boolean {
  return (
    callSid.length > 0 && callSid.length <= 128 && /^[\w.:-]+$/.test(callSid) && !callSid.startsWith('.')
  );
}

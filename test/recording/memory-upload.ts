// An upload kept in memory, for recorder tests: the bytes as a file would hold them (header
// rewrites applied at the start), and a switch that makes the store fall behind.
import type { RecordingUpload } from '../../src/recording/store.js';

export interface MemoryUpload extends RecordingUpload {
  file(): Buffer;
  ended: boolean;
  aborted: boolean;
  /** Pretend this many bytes wait on the store. */
  backlog: number;
}

export function memoryUpload(): MemoryUpload {
  const chunks: Buffer[] = [];
  let start: Buffer | null = null;
  const upload: MemoryUpload = {
    ended: false,
    aborted: false,
    backlog: 0,
    get pendingBytes() {
      return upload.backlog;
    },
    write(bytes) {
      chunks.push(Buffer.from(bytes));
    },
    rewriteStart(bytes) {
      start = Buffer.from(bytes);
    },
    async end() {
      upload.ended = true;
    },
    async abort() {
      upload.aborted = true;
    },
    file() {
      const all = Buffer.concat(chunks);
      start?.copy(all, 0);
      return all;
    },
  };
  return upload;
}

// Flite on a worker thread (flite-worker.ts), so a synthesis never stalls the event loop that carries
// every other live call's audio. Requests wait in a bounded queue; when the thread dies, every
// synthesis it held fails (the caller handles it as any synthesis error) and the next request
// starts a new thread.
import { Worker } from 'node:worker_threads';

/** Syntheses waiting or running at once; one more fails at once rather than queueing without end. */
export const MAX_QUEUED_SYNTHESES = 64;

export interface SynthesisRequest {
  id: number;
  text: string;
}

export type SynthesisReply =
  { ready: true } | { id: number; samples: Int16Array; workerMs: number } | { id: number; error: string };

export interface Synthesis {
  /** 16-bit PCM at 8 kHz. */
  samples: Int16Array;
  /** CPU time the thread spent on it. */
  workerMs: number;
}

interface Pending {
  resolve: (synthesis: Synthesis) => void;
  reject: (err: Error) => void;
}

interface Thread {
  worker: Worker;
  ready: Promise<void>;
  pending: Map<number, Pending>;
}

/** Running from source (the tests) the worker is TypeScript too, loaded through scripts/. */
const FROM_SOURCE = import.meta.url.endsWith('.ts');

function startWorker(script: URL): Worker {
  if (!FROM_SOURCE || !script.pathname.endsWith('.ts')) return new Worker(script);
  const hooks = new URL('../../../scripts/typescript-hooks.mjs', import.meta.url);
  const boot = `require('node:module').register(${JSON.stringify(hooks.href)});
import(${JSON.stringify(script.href)}).catch((err) => { throw err; });`;
  return new Worker(boot, { eval: true });
}

export class FliteThread {
  readonly #script: URL;
  #thread: Thread | undefined;
  #nextId = 0;
  #queued = 0;

  /** `script` speaks the flite-worker.ts messages; the default is that file beside this one. */
  constructor(script = new URL(FROM_SOURCE ? './flite-worker.ts' : './flite-worker.js', import.meta.url)) {
    this.#script = script;
  }

  /** Starts the thread and waits until its synthesizer is compiled. */
  warm(): Promise<void> {
    return this.#start().ready;
  }

  synthesize(text: string): Promise<Synthesis> {
    if (this.#queued >= MAX_QUEUED_SYNTHESES) {
      return Promise.reject(
        new Error(`speech synthesis busy: ${MAX_QUEUED_SYNTHESES} texts already waiting`),
      );
    }
    const thread = this.#start();
    const id = ++this.#nextId;
    this.#queued++;
    // A thread with work keeps the process alive; an idle one does not hold it open.
    thread.worker.ref();
    return new Promise<Synthesis>((resolve, reject) => {
      thread.pending.set(id, { resolve, reject });
      thread.worker.postMessage({ id, text } satisfies SynthesisRequest);
    }).finally(() => {
      this.#queued--;
      if (thread.pending.size === 0) thread.worker.unref();
    });
  }

  /** Stops the thread; syntheses it held fail. */
  async close(): Promise<void> {
    const thread = this.#thread;
    if (thread) await thread.worker.terminate();
  }

  #start(): Thread {
    if (this.#thread) return this.#thread;
    const worker = startWorker(this.#script);
    worker.unref();
    const pending = new Map<number, Pending>();
    let markReady!: () => void;
    let failReady!: (err: Error) => void;
    const ready = new Promise<void>((resolve, reject) => {
      markReady = resolve;
      failReady = reject;
    });
    // warm() may have no caller awaiting it; its failure is reported through the syntheses.
    ready.catch(() => undefined);
    const thread: Thread = { worker, ready, pending };
    const fail = (err: Error) => {
      if (this.#thread === thread) this.#thread = undefined;
      failReady(err);
      for (const request of pending.values()) request.reject(err);
      pending.clear();
    };
    worker.on('message', (reply: SynthesisReply) => {
      if ('ready' in reply) return markReady();
      const request = pending.get(reply.id);
      if (!request) return;
      pending.delete(reply.id);
      if ('error' in reply) request.reject(new Error(reply.error));
      else request.resolve({ samples: reply.samples, workerMs: reply.workerMs });
    });
    worker.on('error', (err) => fail(new Error(`speech synthesis thread failed: ${err.message}`)));
    worker.on('exit', (code) => fail(new Error(`speech synthesis thread exited (code ${code})`)));
    this.#thread = thread;
    return thread;
  }
}

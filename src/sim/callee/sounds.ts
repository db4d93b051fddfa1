// What the simulated callees sound like, in μ-law 8 kHz: a person's line (a bundled phrase), a
// voicemail greeting ending in its beep, a fax machine's calling tone.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { encodeMulaw } from '../../audio/codec.js';
import { packageRoot } from '../package-root.js';

const SAMPLE_RATE = 8000;

function tone(hz: number, ms: number, amplitude = 8000): Buffer {
  const samples = new Int16Array(Math.round((SAMPLE_RATE * ms) / 1000));
  for (let i = 0; i < samples.length; i++) {
    samples[i] = Math.round(amplitude * Math.sin((2 * Math.PI * hz * i) / SAMPLE_RATE));
  }
  return encodeMulaw(samples);
}

function silence(ms: number): Buffer {
  return Buffer.alloc(Math.round((SAMPLE_RATE * ms) / 1000), 0xff);
}

export interface CalleeSounds {
  /** What a person says once the agent has greeted them. */
  person: Buffer;
  /** A voicemail greeting, then the beep; `beepEndsAtMs` is when the message may start. */
  voicemail: Buffer;
  beepEndsAtMs: number;
  /** A fax machine's calling tone (CNG: 1100 Hz, half a second on, three off), repeated. */
  fax: Buffer;
}

/** The beep that ends a voicemail greeting: 1 kHz for half a second. */
export const BEEP_MS = 500;

let cached: CalleeSounds | null = null;

export function calleeSounds(): CalleeSounds {
  if (cached) return cached;
  const phrases = join(packageRoot(), 'assets', 'phrases');
  const greeting = readFileSync(join(phrases, 'unavailable.ulaw'));
  const voicemail = Buffer.concat([greeting, silence(300), tone(1000, BEEP_MS)]);
  const cng = Buffer.concat([tone(1100, 500), silence(3000)]);
  cached = {
    person: readFileSync(join(phrases, 'caller-order.ulaw')),
    voicemail,
    beepEndsAtMs: voicemail.length / 8,
    fax: Buffer.concat([cng, cng]),
  };
  return cached;
}

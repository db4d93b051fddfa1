// Every text the local agent says is speech: Flite's words, not a tone per word. Speech has the
// shape of words (loud stretches parted by short quiet gaps), lasts about as long as the text takes
// to say, differs with the text, and the same text is synthesised once.
import { describe, expect, it } from 'vitest';
import { decodeMulaw } from '../../src/audio/codec.js';
import { PhraseBook } from '../../src/sim/agent/phrases.js';
import { speakText } from '../../src/sim/speech/spoken-text.js';
import { frameEnergies } from '../helpers/wav-stereo.js';

const GREETING = 'Hi Ada, this is Example Dental calling about your check-up. Is now a good time?';
const VOICEMAIL = 'Hi Ada, this is Example Dental about your check-up. Please call us back. Goodbye.';

/** Runs of loud 20 ms frames, parted by at least one quiet frame: roughly syllables and words. */
function loudRuns(energies: number[], threshold: number): number {
  let runs = 0;
  let inRun = false;
  for (const energy of energies) {
    if (energy >= threshold && !inRun) runs += 1;
    inRun = energy >= threshold;
  }
  return runs;
}

async function envelope(text: string) {
  const samples = decodeMulaw(await speakText(text));
  const energies = frameEnergies(samples);
  const peak = Math.max(...energies);
  return { samples, energies, peak, seconds: samples.length / 8000 };
}

describe('the local agent speaks every text', () => {
  it('says a greeting with a name as words: loud stretches parted by quiet gaps', async () => {
    const { energies, peak } = await envelope(GREETING);
    expect(peak).toBeGreaterThan(1000);
    // Words and syllables: many separate loud stretches, and real quiet between some of them.
    expect(loudRuns(energies, peak * 0.25)).toBeGreaterThanOrEqual(8);
    const quiet = energies.filter((energy) => energy < peak * 0.05).length;
    expect(quiet).toBeGreaterThanOrEqual(5);
    // Not a steady tone: the level moves a lot from frame to frame.
    const changes = energies.slice(1).filter((energy, i) => Math.abs(energy - energies[i]!) > peak * 0.2);
    expect(changes.length).toBeGreaterThanOrEqual(15);
  });

  it('has the sounds of speech: voiced frames and hissing ones (s, th), not one pitch throughout', async () => {
    const { samples, energies, peak } = await envelope(GREETING);
    // Zero crossings per 20 ms frame: a voiced vowel crosses a few dozen times at most, an "s" many
    // more; a tone at one pitch crosses the same number of times in every frame.
    const crossings = energies.map((_, frame) => {
      let count = 0;
      for (let i = frame * 160 + 1; i < (frame + 1) * 160; i++) {
        if (samples[i - 1]! < 0 !== samples[i]! < 0) count += 1;
      }
      return count;
    });
    const heard = crossings.filter((_, frame) => energies[frame]! > peak * 0.02);
    expect(heard.filter((count) => count < 25).length).toBeGreaterThanOrEqual(10);
    expect(heard.filter((count) => count > 50).length).toBeGreaterThanOrEqual(3);
  });

  it('takes about as long as the text takes to say (two to four words a second)', async () => {
    for (const text of [GREETING, VOICEMAIL, 'Goodbye.']) {
      const words = text.split(/\s+/).length;
      const { seconds } = await envelope(text);
      expect(seconds, text).toBeGreaterThan(words / 4.5);
      expect(seconds, text).toBeLessThan(words / 1.5 + 0.6);
    }
  });

  it('says different texts differently, and the same text the same, once', async () => {
    const greeting = await speakText(GREETING);
    expect(await speakText(GREETING)).toBe(greeting);
    const other = await speakText(
      'Hi Alan, this is Example Dental calling about your check-up. Is now a good time?',
    );
    expect(other.equals(greeting)).toBe(false);
  });

  it('speaks scripted replies and voicemails that match no bundled phrase', async () => {
    const phrases = await PhraseBook.load();
    const reply = await phrases.resolve('Your order W-1 ships tomorrow.');
    expect(reply.phraseId).toBeUndefined();
    const energies = frameEnergies(decodeMulaw(reply.audio));
    expect(loudRuns(energies, Math.max(...energies) * 0.25)).toBeGreaterThanOrEqual(4);
    // A bundled phrase still plays its recording.
    expect((await phrases.resolve('help')).phraseId).toBe('help');
  });
});

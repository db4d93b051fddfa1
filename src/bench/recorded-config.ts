// `bench --record`: the shipped config/ copied with recording turned on in every profile, so each
// call of the load is recorded to the file store (docs/recordings.md), and what was stored, counted
// after the run. No consent prompt: the load agent renders no speech, and the prompt is not what is
// measured; the recorder's work on every frame is.
import { cpSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const RECORDING = { enabled: true, consent: null, retentionDays: 1 };

/** Copies `source` (a config folder) to `into`, every agent profile recorded; returns `into`. */
export function recordedConfigDir(source: string, into: string): string {
  cpSync(source, into, { recursive: true });
  const agents = join(into, 'agents');
  for (const name of readdirSync(agents).filter((file) => file.endsWith('.json'))) {
    const path = join(agents, name);
    const profile = JSON.parse(readFileSync(path, 'utf8')) as Record<string, unknown>;
    writeFileSync(path, `${JSON.stringify({ ...profile, recording: RECORDING }, null, 2)}\n`);
  }
  return into;
}

/** The WAV files in `$DATA_DIR/recordings` and their bytes. */
export function storedRecordings(dataDir: string): { files: number; bytes: number } {
  const dir = join(dataDir, 'recordings');
  let names: string[];
  try {
    names = readdirSync(dir).filter((name) => name.endsWith('.wav'));
  } catch {
    return { files: 0, bytes: 0 };
  }
  const bytes = names.reduce((sum, name) => sum + statSync(join(dir, name)).size, 0);
  return { files: names.length, bytes };
}

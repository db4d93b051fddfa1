#!/usr/bin/env node
// Builds the operator console (web/ → dist/console/, docs/console.md) as part of `npm run build`.
// Skipped when the output is newer than every input, so `npm start` stays quick; `--force` rebuilds,
// `--sizes` prints what each script and stylesheet weighs gzipped (docs/console.md).
// Only the console's own files are replaced: dist/console/ may also hold the server's compiled code.
import { existsSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const outDir = join(root, 'dist', 'console');
const index = join(outDir, 'index.html');

/** Newest modification time among the console's inputs. */
function newestInput() {
  const inputs = [join(root, 'package-lock.json'), join(root, 'scripts', 'build-console.mjs')];
  for (const file of readdirSync(join(root, 'web'), { recursive: true, encoding: 'utf8' })) {
    inputs.push(join(root, 'web', file));
  }
  // The console imports the server's record shapes and campaign vocabularies.
  inputs.push(
    join(root, 'src', 'store', 'call-record.ts'),
    join(root, 'src', 'store', 'campaign-records.ts'),
  );
  return Math.max(...inputs.map((file) => statSync(file, { throwIfNoEntry: false })?.mtimeMs ?? 0));
}

function printSizes() {
  const assets = join(outDir, 'assets');
  for (const file of readdirSync(assets).sort()) {
    const bytes = readFileSync(join(assets, file));
    const gzipped = gzipSync(bytes, { level: 9 }).length;
    console.log(`${file}\t${(bytes.length / 1024).toFixed(1)} KB\t${(gzipped / 1024).toFixed(1)} KB gzipped`);
  }
}

const built = statSync(index, { throwIfNoEntry: false });
if (!process.argv.includes('--force') && built !== undefined && built.mtimeMs > newestInput()) {
  if (process.argv.includes('--sizes')) printSizes();
  process.exit(0);
}

rmSync(join(outDir, 'assets'), { recursive: true, force: true });
for (const file of ['index.html', 'favicon.svg']) rmSync(join(outDir, file), { force: true });

const { build } = await import('vite');
await build({ configFile: join(root, 'web', 'vite.config.ts') });
if (!existsSync(index)) throw new Error('the console build wrote no dist/console/index.html');
if (process.argv.includes('--sizes')) printSizes();

#!/usr/bin/env node
// npm links the bins of dependencies into node_modules/.bin, but not the project's own, so
// `npx callbridge` in a fresh clone would look for a package of that name in the registry.
// Linking bin/callbridge.js there lets npx find it locally (run by `npm ci` through `prepare`).
import { existsSync, lstatSync, mkdirSync, symlinkSync, unlinkSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const binDir = join(root, 'node_modules', '.bin');
const link = join(binDir, 'callbridge');
const target = join(root, 'bin', 'callbridge.js');

if (existsSync(join(root, 'node_modules'))) {
  mkdirSync(binDir, { recursive: true });
  if (lstatSync(link, { throwIfNoEntry: false })) unlinkSync(link);
  symlinkSync(relative(binDir, target), link);
}

// Tests that spawn the real entry point need dist/ current with src/ (npm test builds first).
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

export const ROOT = new URL('../..', import.meta.url).pathname;

/** Builds dist/ when a source file is newer than its output, as `npm test` does before the suite. */
export function buildIfStale(): void {
  const sources = readdirSync(join(ROOT, 'src'), { recursive: true, encoding: 'utf8' });
  const stale = sources.some((file) => {
    // Declaration files emit nothing, so they have no output to compare with.
    if (!file.endsWith('.ts') || file.endsWith('.d.ts')) return false;
    const output = join(ROOT, 'dist', file.replace(/\.ts$/, '.js'));
    const built = statSync(output, { throwIfNoEntry: false });
    return built === undefined || built.mtimeMs < statSync(join(ROOT, 'src', file)).mtimeMs;
  });
  if (!stale) {
    // The console has its own inputs (web/); its build script skips itself when they are older.
    const consoleBuild = spawnSync(process.execPath, ['scripts/build-console.mjs'], {
      cwd: ROOT,
      encoding: 'utf8',
    });
    if (consoleBuild.status !== 0) throw new Error(`the console build failed:\n${consoleBuild.stderr}`);
    return;
  }
  const build = spawnSync('npm', ['run', 'build'], { cwd: ROOT, encoding: 'utf8' });
  if (build.status === 0) return;
  // tsc emits despite type errors; those are the type-check's to report, the process is ours to run.
  if (!existsSync(join(ROOT, 'dist', 'main.js'))) throw new Error(`npm run build failed:\n${build.stdout}`);
  console.warn(`npm run build reported errors; testing what it emitted:\n${build.stdout}`);
}

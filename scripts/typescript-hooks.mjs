// Module hooks that let a worker thread started from source (under the tests, where the server runs
// as TypeScript) load .ts files: `./x.js` imports resolve to `./x.ts` when only that exists, and
// TypeScript is stripped to JavaScript. The built server in dist/ never uses them.
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';

export async function resolve(specifier, context, next) {
  try {
    return await next(specifier, context);
  } catch (err) {
    const fromTypeScript = context.parentURL?.endsWith('.ts');
    if (!fromTypeScript || !specifier.startsWith('.') || !specifier.endsWith('.js')) throw err;
    return next(`${specifier.slice(0, -3)}.ts`, context);
  }
}

export async function load(url, context, next) {
  if (!url.startsWith('file:') || !url.endsWith('.ts')) return next(url, context);
  const { default: ts } = await import('typescript');
  const path = fileURLToPath(url);
  const { outputText } = ts.transpileModule(await readFile(path, 'utf8'), {
    fileName: path,
    compilerOptions: {
      module: ts.ModuleKind.ESNext,
      target: ts.ScriptTarget.ES2022,
      verbatimModuleSyntax: true,
    },
  });
  return { format: 'module', source: outputText, shortCircuit: true };
}

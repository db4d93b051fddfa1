// The console's build (docs/console.md): web/ → dist/console/, served by the server at /console.
// Preact's JSX through Vite's own transform, so no Babel and no framework plugin is installed.
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

const root = fileURLToPath(new URL('.', import.meta.url));

export default defineConfig({
  root,
  base: '/console/',
  // The server swaps this placeholder for a fresh nonce per response; the CSP names that nonce.
  html: { cspNonce: '__CSP_NONCE__' },
  oxc: { jsx: { runtime: 'automatic', importSource: 'preact' } },
  build: {
    outDir: fileURLToPath(new URL('../dist/console', import.meta.url)),
    // scripts/build-console.mjs clears the console's own files; the server's code may share the folder.
    emptyOutDir: false,
    target: 'es2022',
    // Inlined assets would become data: URLs, which the CSP refuses.
    assetsInlineLimit: 0,
    reportCompressedSize: false,
  },
  logLevel: 'warn',
});

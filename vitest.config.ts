import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 20_000,
    hookTimeout: 20_000,
    // Suites open real sockets and child processes; two workers suit the 2-core machines CI runs on.
    maxWorkers: 2,
    // The JSON report lets CI print one plain "N passed, N failed" line.
    reporters: ['default', 'json'],
    outputFile: { json: 'coverage/vitest-report.json' },
  },
});

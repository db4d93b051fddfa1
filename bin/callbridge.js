#!/usr/bin/env node
// The package's command; the TypeScript build lives in dist/ (npm ci builds it through `prepare`).
import '../dist/cli.js';

#!/usr/bin/env node
// Regenerates the web client's typed API: the OpenAPI document (web/src/api/openapi.json) from the compiled
// service, then its TypeScript types (web/src/api/schema.d.ts) with openapi-typescript. The test suite fails
// when either is out of date with the service. Usage: npm run web:api
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const run = (args, options = {}) =>
  execFileSync(process.execPath, args, {
    cwd: root,
    stdio: ['ignore', 'pipe', 'inherit'],
    ...options,
  });

// Compiled first: the Swagger CLI plugin describes the DTOs at build time.
run(['node_modules/@nestjs/cli/bin/nest.js', 'build'], { stdio: 'inherit' });
writeFileSync(
  resolve(root, 'web/src/api/openapi.json'),
  run(['dist/openapi-export.js']),
);
run(
  [
    'node_modules/openapi-typescript/bin/cli.js',
    'web/src/api/openapi.json',
    '--output',
    'web/src/api/schema.d.ts',
  ],
  { stdio: 'inherit' },
);
console.log(
  'web/src/api/openapi.json and web/src/api/schema.d.ts are up to date',
);

#!/usr/bin/env node
// Before `npm start`: builds the web client (web/dist) when it is missing or older than its sources, so
// `npm install` then `npm start` opens a working product at http://localhost:3000. A few seconds at most.
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const built = join(root, 'web', 'dist', 'index.html');

function newest(path) {
  const stat = statSync(path);
  if (!stat.isDirectory()) return stat.mtimeMs;
  return Math.max(
    stat.mtimeMs,
    ...readdirSync(path).map((name) => newest(join(path, name))),
  );
}

const sources = [
  join(root, 'web', 'src'),
  join(root, 'web', 'index.html'),
  join(root, 'web', 'vite.config.mts'),
];
if (
  existsSync(built) &&
  statSync(built).mtimeMs >= Math.max(...sources.map(newest))
)
  process.exit(0);
console.log('building the web client (web/dist)…');
execFileSync(
  process.execPath,
  [
    join(root, 'node_modules', 'vite', 'bin', 'vite.js'),
    'build',
    '--config',
    'web/vite.config.mts',
    '--logLevel',
    'warn',
  ],
  { cwd: root, stdio: 'inherit' },
);

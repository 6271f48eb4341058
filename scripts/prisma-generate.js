#!/usr/bin/env node
// Generates the Prisma client (src/infra/prisma/generated) without Prisma's binary download host:
// `prisma generate` only needs PRISMA_SCHEMA_ENGINE_BINARY to point at an executable, and the stand-in
// fails loudly if anything ever tries to use it as a real engine. Runs at postinstall and before builds.
/* eslint-disable @typescript-eslint/no-require-imports -- CommonJS script run by node */
const { spawnSync } = require('node:child_process');
const { existsSync } = require('node:fs');
const path = require('node:path');

const root = path.resolve(__dirname, '..');
const cli = path.join(root, 'node_modules', 'prisma', 'build', 'index.js');
if (!existsSync(cli)) {
  console.log(
    'prisma CLI not installed (production install): skipping client generation',
  );
  process.exit(0);
}
const env = {
  ...process.env,
  PRISMA_HIDE_UPDATE_MESSAGE: '1',
  CHECKPOINT_DISABLE: '1',
};
env.PRISMA_SCHEMA_ENGINE_BINARY ??= path.join(
  root,
  'scripts',
  'no-schema-engine.sh',
);
const result = spawnSync(process.execPath, [cli, 'generate'], {
  cwd: root,
  env,
  stdio: 'inherit',
});
process.exit(result.status ?? 1);

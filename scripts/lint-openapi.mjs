#!/usr/bin/env node
// Lints an OpenAPI document with Redocly's standard ruleset ("recommended").
// Usage: node scripts/lint-openapi.mjs <file.json | http://host/docs-json>
// Prints one line per problem and a JSON summary; exits 1 when there is any error.
import { readFile } from 'node:fs/promises';
import { createConfig, lintFromString } from '@redocly/openapi-core';

const target = process.argv[2];
if (!target) {
  console.error('usage: lint-openapi <file.json | url>');
  process.exit(2);
}
const source = /^https?:\/\//.test(target)
  ? await (await fetch(target)).text()
  : await readFile(target, 'utf8');
const config = await createConfig({ extends: ['recommended'] });
const problems = await lintFromString({
  source,
  absoluteRef: 'openapi.json',
  config,
});
for (const problem of problems) {
  const where = problem.location?.[0]?.pointer ?? '';
  console.log(
    `${problem.severity}\t${problem.ruleId}\t${where}\t${problem.message}`,
  );
}
const errors = problems.filter(
  (problem) => problem.severity === 'error',
).length;
const warnings = problems.filter(
  (problem) => problem.severity === 'warn',
).length;
console.log(JSON.stringify({ errors, warnings }));
process.exit(errors > 0 ? 1 : 0);

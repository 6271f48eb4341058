import { existsSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { parseEnv } from 'node:util';

/**
 * The environment the service starts with: the variables of `.env` in the working directory (if there is
 * one; `.env.example` says to copy it), under those set in the real environment, which always win. The
 * file is parsed by Node's own dotenv parser (quotes, comments, `export` prefixes are not needed).
 */
export function environmentWithDotEnv(
  env: NodeJS.ProcessEnv = process.env,
  file = resolve(process.cwd(), '.env'),
): NodeJS.ProcessEnv {
  if (!existsSync(file)) return env;
  const fromFile = parseEnv(readFileSync(file, 'utf8'));
  return { ...fromFile, ...env };
}

import { existsSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { parseEnv } from 'node:util';
import { ConfigError } from './load-config';

/** `ENV_FILE=none`: read no file (tests that start the service use it, so a developer's .env stays out). */
export const NO_ENV_FILE = 'none';

/**
 * The environment the service starts with: the variables of a dotenv file under those set in the real
 * environment, which always win. The file is `.env` in the working directory when there is one (`.env.example`
 * says to copy it); `ENV_FILE` names another (which must exist), or `none` for no file. Parsed by Node's own
 * dotenv parser (quotes, comments, `export` prefixes are not needed).
 */
export function environmentWithDotEnv(
  env: NodeJS.ProcessEnv = process.env,
  defaultFile = resolve(process.cwd(), '.env'),
): NodeJS.ProcessEnv {
  const named = env.ENV_FILE;
  if (named === NO_ENV_FILE) return env;
  const file = named ? resolve(named) : defaultFile;
  if (!existsSync(file)) {
    if (named)
      throw new ConfigError([
        `ENV_FILE: ${file} does not exist (set ENV_FILE=${NO_ENV_FILE} to read no file)`,
      ]);
    return env;
  }
  const fromFile = parseEnv(readFileSync(file, 'utf8'));
  return { ...fromFile, ...env };
}

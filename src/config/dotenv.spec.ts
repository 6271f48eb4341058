import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { environmentWithDotEnv } from './dotenv';
import { ConfigError, loadConfig } from './load-config';

describe('environmentWithDotEnv', () => {
  const dir = mkdtempSync(join(tmpdir(), 'dotenv-'));
  const file = join(dir, '.env');

  it('reads .env, with the real environment winning over the file', () => {
    writeFileSync(
      file,
      '# a comment\nPORT=4100\nLOG_LEVEL="debug"\nAPP_URL=https://app.example.com\n',
    );
    const env = environmentWithDotEnv({ PORT: '4200' }, file);
    expect(env).toEqual(
      expect.objectContaining({
        PORT: '4200',
        LOG_LEVEL: 'debug',
        APP_URL: 'https://app.example.com',
      }),
    );
    const config = loadConfig(env);
    expect(config.http.port).toBe(4200);
    expect(config.log.level).toBe('debug');
  });

  it('answers the environment unchanged without a .env', () => {
    const env = { PORT: '4300' };
    expect(environmentWithDotEnv(env, join(dir, 'missing.env'))).toBe(env);
  });

  it('names a bad value that came from the file, as for the environment', () => {
    writeFileSync(file, 'PORT=not-a-port\n');
    expect(() => loadConfig(environmentWithDotEnv({}, file))).toThrow(
      ConfigError,
    );
    expect(() => loadConfig(environmentWithDotEnv({}, file))).toThrow(/PORT/);
  });
});

describe('ENV_FILE', () => {
  const dir = mkdtempSync(join(tmpdir(), 'env-file-'));
  const defaultFile = join(dir, '.env');
  const other = join(dir, 'service.env');
  writeFileSync(defaultFile, 'PORT=4100\n');
  writeFileSync(other, 'PORT=4500\n');

  it('names another file to read instead of .env', () => {
    expect(environmentWithDotEnv({ ENV_FILE: other }, defaultFile).PORT).toBe(
      '4500',
    );
  });

  it('reads no file with ENV_FILE=none', () => {
    const env = { ENV_FILE: 'none' };
    expect(environmentWithDotEnv(env, defaultFile)).toBe(env);
  });

  it('stops the start when the named file does not exist, naming it', () => {
    const missing = join(dir, 'missing.env');
    expect(() =>
      environmentWithDotEnv({ ENV_FILE: missing }, defaultFile),
    ).toThrow(ConfigError);
    expect(() =>
      environmentWithDotEnv({ ENV_FILE: missing }, defaultFile),
    ).toThrow(/ENV_FILE: .*missing\.env does not exist/);
  });
});

import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { ConfigError, loadConfig } from './load-config';
import { ENV_VARIABLES } from './env.schema';

function problemsOf(env: NodeJS.ProcessEnv): string[] {
  try {
    loadConfig(env);
  } catch (error) {
    if (error instanceof ConfigError) return error.problems;
    throw error;
  }
  throw new Error('expected a ConfigError');
}

const strongSecret = 'x'.repeat(20) + 'k9FQ2mZr7pLs4TyW';

describe('loadConfig', () => {
  it('gives a working development config from an empty environment', () => {
    const config = loadConfig({});
    expect(config.env).toBe('development');
    expect(config.http.port).toBe(3000);
    expect(config.database.url).toBeUndefined();
    expect(config.database.embeddedDir).toBe('.data/postgres');
    expect(config.redis.url).toBeUndefined();
    expect(config.corsOrigins).toEqual(['http://localhost:3000']);
    expect(config.catalogFile).toBe('config/catalog.json');
    expect(config.providers).toMatchObject({
      firstTokenTimeoutMs: 60_000,
      retries: 2,
      maxAttempts: 6,
      keyCooldownMs: 60_000,
    });
    expect(config.http.trustProxy).toBe(false);
  });

  it("reads the endpoints' variables without ever showing them", () => {
    const config = loadConfig({ OPENAI_API_KEY: 'sk-secret-1', EMPTY: ' ' });
    expect(config.providers.environment.get('OPENAI_API_KEY')).toBe(
      'sk-secret-1',
    );
    expect(config.providers.environment.get('EMPTY')).toBeUndefined();
    expect(JSON.stringify(config)).not.toContain('sk-secret-1');
  });

  it('names each bad variable', () => {
    const problems = problemsOf({
      PORT: 'eighty',
      LOG_LEVEL: 'loud',
      APP_URL: 'not a url',
      DATABASE_URL: 'mysql://x',
      S3_FORCE_PATH_STYLE: 'maybe',
    });
    expect(problems.map((problem) => problem.split(':')[0]).sort()).toEqual([
      'APP_URL',
      'DATABASE_URL',
      'LOG_LEVEL',
      'PORT',
      'S3_FORCE_PATH_STYLE',
    ]);
    expect(problems.join('\n')).toMatch(
      /PORT: must be an integer between 0 and 65535/,
    );
  });

  it('refuses out-of-range numbers and malformed lists', () => {
    expect(problemsOf({ PORT: '70000' })[0]).toMatch(/^PORT:/);
    expect(
      problemsOf({
        CORS_ORIGINS: 'https://ok.example, https://bad.example/path',
      })[0],
    ).toMatch(/^CORS_ORIGINS: "https:\/\/bad.example\/path"/);
    expect(problemsOf({ ADMIN_EMAILS: 'root' })[0]).toMatch(/^ADMIN_EMAILS/);
    expect(problemsOf({ S3_ENDPOINT: 'http://127.0.0.1:9000' })[0]).toMatch(
      /^S3_BUCKET/,
    );
    expect(problemsOf({ TRUST_PROXY: 'yes' })[0]).toMatch(
      /^TRUST_PROXY: must list IP addresses/,
    );
    expect(problemsOf({ TRUST_PROXY: '1' })[0]).toMatch(/^TRUST_PROXY/);
    expect(problemsOf({ TRUST_PROXY: '10.0.0.0/33' })[0]).toMatch(
      /^TRUST_PROXY/,
    );
    expect(problemsOf({ HOST: 'bad host' })[0]).toMatch(
      /^HOST: must be an IP address/,
    );
    expect(problemsOf({ STRIPE_SECRET_KEY: 'sk_test_1' })).toEqual([
      'STRIPE_WEBHOOK_SECRET: is required when STRIPE_SECRET_KEY is set',
    ]);
    expect(problemsOf({ PADDLE_WEBHOOK_SECRET: 'pdl_ntfset_1' })).toEqual([
      'PADDLE_API_KEY: is required when PADDLE_WEBHOOK_SECRET is set',
    ]);
    expect(problemsOf({ BILLING_GRACE_DAYS: '61' })[0]).toMatch(
      /^BILLING_GRACE_DAYS/,
    );
    expect(
      loadConfig({ TRUST_PROXY: 'loopback, 10.0.0.0/8, ::1, fd00::/8' }).http
        .trustProxy,
    ).toEqual(['loopback', '10.0.0.0/8', '::1', 'fd00::/8']);
  });

  it('in production, refuses a start without secrets, database or Redis', () => {
    const problems = problemsOf({ NODE_ENV: 'production' });
    expect(problems.map((problem) => problem.split(':')[0]).sort()).toEqual([
      'DATABASE_URL',
      'PASSWORD_PEPPER',
      'REDIS_URL',
      'SESSION_SECRET',
    ]);
  });

  it('in production, refuses weak or development secrets', () => {
    const problems = problemsOf({
      NODE_ENV: 'production',
      SESSION_SECRET: 'short',
      PASSWORD_PEPPER: 'dev-only-password-pepper-change-me-in-production',
      DATABASE_URL: 'postgresql://db/chat',
      REDIS_URL: 'redis://cache:6379',
    });
    expect(problems).toEqual([
      expect.stringMatching(/^SESSION_SECRET: must be a random value/),
      expect.stringMatching(/^PASSWORD_PEPPER: must be a random value/),
    ]);
  });

  it('accepts a complete production environment', () => {
    const config = loadConfig({
      NODE_ENV: 'production',
      SESSION_SECRET: strongSecret,
      PASSWORD_PEPPER: strongSecret.split('').reverse().join(''),
      DATABASE_URL: 'postgresql://db/chat',
      REDIS_URL: 'redis://cache:6379',
      APP_URL: 'https://app.example.com/',
      TRUST_PROXY: '10.0.0.0/8, loopback',
      ADMIN_EMAILS: 'Ops@Example.com',
    });
    expect(config.appUrl).toBe('https://app.example.com');
    expect(config.corsOrigins).toEqual(['https://app.example.com']);
    expect(config.http.trustProxy).toEqual(['10.0.0.0/8', 'loopback']);
    expect(config.adminEmails).toEqual(['ops@example.com']);
  });

  it('.env.example lists exactly the variables the service reads', () => {
    const text = readFileSync(
      resolve(__dirname, '..', '..', '.env.example'),
      'utf8',
    );
    const listed = [...text.matchAll(/^([A-Z0-9_]+)=/gm)].map(
      (match) => match[1],
    );
    expect([...listed].sort()).toEqual([...ENV_VARIABLES].sort());
  });

  it('.env.example defaults are the defaults of the schema', () => {
    const text = readFileSync(
      resolve(__dirname, '..', '..', '.env.example'),
      'utf8',
    );
    const env = Object.fromEntries(
      [...text.matchAll(/^([A-Z0-9_]+)=(.*)$/gm)].map((match) => [
        match[1],
        match[2],
      ]),
    );
    expect(loadConfig(env)).toEqual(loadConfig({}));
  });
});

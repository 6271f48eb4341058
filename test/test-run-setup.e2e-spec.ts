import { spawnSync } from 'node:child_process';
import { chmodSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { createConnection } from 'node:net';
import { join } from 'node:path';
import Redis from 'ioredis';
import {
  provideChromium,
  provideKubectl,
  runIncludes,
  SetupFailure,
} from './support/run-tools';
import { childEnv, freePort, ROOT } from './support/service-process';
import { provideRedis, provideRedisServer } from './support/test-redis';

/** A directory holding one executable script named `name`, to stand in for an installed program. */
function binDir(name: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'run-setup-bin-'));
  writeFileSync(join(dir, name), '#!/bin/sh\nexit 0\n');
  chmodSync(join(dir, name), 0o755);
  return dir;
}

const emptyPath = () => ({
  PATH: mkdtempSync(join(tmpdir(), 'run-setup-empty-')),
});
const cannotInstall = () => false;

/**
 * What `npm test` does on a fresh machine before any test: it finds or installs the programs the selected
 * tests drive, and when one cannot be had it stops at once with one line saying how to get it.
 */
describe('the test run’s own setup', () => {
  it('stops a run that includes the browser tests at once, with one line, when no browser can be had', () => {
    const run = spawnSync(
      process.execPath,
      ['node_modules/jest/bin/jest.js', 'test/web-journey.e2e-spec.ts', '--ci'],
      {
        cwd: ROOT,
        encoding: 'utf8',
        env: childEnv({ CHROMIUM_PATH: '/nonexistent/chromium' }),
        timeout: 120_000,
      },
    );
    expect(run.status).toBe(1);
    const lines = `${run.stdout}${run.stderr}`.trim().split('\n');
    expect(lines).toEqual([
      expect.stringMatching(
        /^CHROMIUM_PATH=\/nonexistent\/chromium is not an executable\. .*apt-get install chromium.*CHROMIUM_PATH/,
      ),
    ]);
  }, 120_000);

  it('finds Chromium or Chrome by CHROMIUM_PATH, then on PATH, and otherwise names how to get one', () => {
    const chrome = binDir('google-chrome');
    expect(provideChromium({ PATH: chrome }, cannotInstall, [])).toBe(
      join(chrome, 'google-chrome'),
    );
    const chosen = join(binDir('my-chromium'), 'my-chromium');
    expect(
      provideChromium({ PATH: chrome, CHROMIUM_PATH: chosen }, cannotInstall),
    ).toBe(chosen);
    let installs = 0;
    const failure = (() => {
      try {
        provideChromium(emptyPath(), () => (installs++, false), []);
      } catch (error) {
        return error as Error;
      }
    })();
    expect(installs).toBe(1); // it tried to install before giving up
    expect(failure).toBeInstanceOf(SetupFailure);
    expect(failure?.stack).toBe(failure?.message); // Jest prints this one line
    expect(failure?.message).toMatch(
      /need Chromium or Chrome: install one \(Debian: apt-get install chromium.*or set CHROMIUM_PATH/,
    );
  });

  it('finds kubectl and redis-server on PATH, and otherwise names how to get them', () => {
    const kubectl = binDir('kubectl');
    expect(provideKubectl({ PATH: kubectl }, cannotInstall)).toBe(
      join(kubectl, 'kubectl'),
    );
    expect(() => provideKubectl(emptyPath(), cannotInstall)).toThrow(
      /need kubectl: install it/,
    );
    expect(() => provideRedisServer(emptyPath(), cannotInstall, [])).toThrow(
      /needs Redis: install redis-server .* or set REDIS_URL/,
    );
  });

  it('provides what the selected test files need, and only that', () => {
    const browser = /^web-.*\.e2e-spec\.ts$/;
    expect(runIncludes({}, browser)).toBe(true);
    expect(runIncludes({ testPathPattern: 'test/web-journey' }, browser)).toBe(
      true,
    );
    expect(runIncludes({ testPathPattern: 'test/chat.e2e' }, browser)).toBe(
      false,
    );
    expect(runIncludes({ testPathPattern: 'src/' }, browser)).toBe(false);
  });

  it('starts a Redis of the run’s own when it is given none, and stops it', async () => {
    const port = await freePort();
    const redis = await provideRedis(port, { PATH: process.env.PATH });
    expect(redis.url).toBe(`redis://127.0.0.1:${port}`);
    const client = new Redis(redis.url, { maxRetriesPerRequest: 0 });
    expect(await client.ping()).toBe('PONG');
    client.disconnect();
    await redis.stop();
    await expect(
      new Promise((done, fail) =>
        createConnection(port, '127.0.0.1')
          .on('connect', done)
          .on('error', fail),
      ),
    ).rejects.toThrow(/ECONNREFUSED/);
    const given = await provideRedis(port, { REDIS_URL: 'redis://cache:6379' });
    expect(given.url).toBe('redis://cache:6379');
  });
});

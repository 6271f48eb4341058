import { spawnSync } from 'node:child_process';
import { accessSync, constants, readdirSync } from 'node:fs';
import { delimiter, join, resolve } from 'node:path';

/**
 * The programs some tests drive (a browser, kubectl, redis-server), found or installed by the run's own
 * setup so that `npm test` needs no manual step. A program that cannot be had stops the run at once with
 * one line saying how to get it: never a silent skip. docs/adr/0002-test-run-environment.md
 */

const ROOT = resolve(__dirname, '..', '..');

/** An error Jest prints as its message alone (no stack): the run's one line of explanation. */
export class SetupFailure extends Error {
  constructor(message: string) {
    super(message);
    this.stack = message;
  }
}

export function isExecutable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** The first of `names` found on PATH or at one of `paths`, else undefined. */
export function findExecutable(
  names: string[],
  paths: string[] = [],
  env: NodeJS.ProcessEnv = process.env,
): string | undefined {
  const dirs = (env.PATH ?? '').split(delimiter).filter(Boolean);
  for (const name of names) {
    for (const dir of dirs) {
      const candidate = join(dir, name);
      if (isExecutable(candidate)) return candidate;
    }
  }
  return paths.find(isExecutable);
}

/** Installs a missing program by running scripts/<script>; true when it succeeded. */
export type Installer = (script: string) => boolean;

/** Runs scripts/<script> (an apt-get install) where that can work: as root with apt-get. */
export const installWithApt: Installer = (script) => {
  if (process.getuid?.() !== 0 || !findExecutable(['apt-get'])) return false;
  const result = spawnSync('bash', [join(ROOT, 'scripts', script)], {
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  return result.status === 0;
};

/** What Jest hands globalSetup about the run: enough to tell which test files it selected. */
export interface RunSelection {
  testPathPattern?: string;
}

/** Whether any test file under test/ named like `pattern` is part of this run. */
export function runIncludes(selection: RunSelection, pattern: RegExp): boolean {
  const dir = join(ROOT, 'test');
  const files = readdirSync(dir)
    .filter((name) => pattern.test(name))
    .map((name) => join(dir, name));
  const filter = selection.testPathPattern
    ? new RegExp(selection.testPathPattern, 'i')
    : undefined;
  return files.some((file) => !filter || filter.test(file));
}

const CHROMIUM_NAMES = [
  'chromium',
  'chromium-browser',
  'google-chrome',
  'google-chrome-stable',
  'chrome',
];
const CHROMIUM_PATHS = [
  '/usr/bin/chromium',
  '/usr/lib/chromium/chromium',
  '/snap/bin/chromium',
  '/opt/google/chrome/chrome',
];
const NO_CHROMIUM =
  'The browser tests (test/web-*.e2e-spec.ts) need Chromium or Chrome: install one (Debian: apt-get install chromium; the run does it itself as root), or set CHROMIUM_PATH to its executable.';

/**
 * The browser for the web client's tests: CHROMIUM_PATH, else a Chromium or Chrome already installed,
 * else Debian's chromium installed now (as root with apt-get). Nothing downloads a browser of its own.
 */
export function provideChromium(
  env: NodeJS.ProcessEnv = process.env,
  install: Installer = installWithApt,
  paths: string[] = CHROMIUM_PATHS,
): string {
  const chosen = env.CHROMIUM_PATH;
  if (chosen) {
    if (isExecutable(chosen)) return chosen;
    throw new SetupFailure(
      `CHROMIUM_PATH=${chosen} is not an executable. ${NO_CHROMIUM}`,
    );
  }
  const found = findExecutable(CHROMIUM_NAMES, paths, env);
  if (found) return found;
  if (install('ensure-chromium.sh')) {
    const installed = findExecutable(CHROMIUM_NAMES, paths, env);
    if (installed) return installed;
  }
  throw new SetupFailure(NO_CHROMIUM);
}

/** kubectl for the manifest tests (`kubectl kustomize` needs no cluster). */
export function provideKubectl(
  env: NodeJS.ProcessEnv = process.env,
  install: Installer = installWithApt,
): string {
  const found = findExecutable(['kubectl'], [], env);
  if (found) return found;
  if (install('ensure-kubectl.sh')) {
    const installed = findExecutable(['kubectl'], [], env);
    if (installed) return installed;
  }
  throw new SetupFailure(
    'The Kubernetes manifest tests (test/kubernetes.e2e-spec.ts) need kubectl: install it (Debian: apt-get install kubectl; the run does it itself as root), see https://kubernetes.io/docs/tasks/tools/',
  );
}

import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { gunzipSync } from 'node:zlib';

const PASSWORD_MIN_CHARACTERS = 12;
const PASSWORD_MAX_CHARACTERS = 128;

/** See config/common-passwords.README.md: breach-corpus passwords of 12+ characters, lower-cased. */
const COMMON_PASSWORDS_FILE = resolve(
  __dirname,
  '..',
  '..',
  'config',
  'common-passwords.txt.gz',
);

let commonPasswords: Set<string> | undefined;

/** Read once, at the first check (about 44,000 entries). */
function common(): Set<string> {
  commonPasswords ??= new Set(
    gunzipSync(readFileSync(COMMON_PASSWORDS_FILE))
      .toString('utf8')
      .split('\n')
      .filter(Boolean),
  );
  return commonPasswords;
}

/**
 * Why a new password is refused, or null. NIST SP 800-63B: a length range, no password made only of
 * whitespace, none from a list of common (breached) passwords, and no composition rules beyond that.
 * The list is compared case-insensitively: changing the case of a listed password does not make it rare.
 */
export function passwordProblem(password: string): string | null {
  const characters = [...password].length;
  if (
    characters < PASSWORD_MIN_CHARACTERS ||
    characters > PASSWORD_MAX_CHARACTERS
  ) {
    return `password must be ${PASSWORD_MIN_CHARACTERS} to ${PASSWORD_MAX_CHARACTERS} characters long`;
  }
  if (password.trim() === '') return 'password must not be only spaces';
  if (common().has(password.toLowerCase()))
    return 'password is one of the most common passwords found in data breaches; choose another';
  return null;
}

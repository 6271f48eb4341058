/**
 * A page of this app a signed-out person asked for (a shared conversation they want to continue), kept for
 * this tab while they sign in or sign up: landingPath() (invitation.ts) then brings them back to it. Only a
 * path of this origin is kept, never another site's address.
 */
const KEY = 'chat.returnPath';

function storage(): Storage | null {
  try {
    return window.sessionStorage;
  } catch {
    return null;
  }
}

function isLocalPath(path: string): boolean {
  return /^\/(?![/\\])/.test(path) && !path.includes('\\');
}

export function rememberReturnPath(path: string): void {
  if (isLocalPath(path)) storage()?.setItem(KEY, path);
}

export function returnPath(): string | null {
  const path = storage()?.getItem(KEY) ?? null;
  return path && isLocalPath(path) ? path : null;
}

/** Called once the person is back on that page. */
export function forgetReturnPath(): void {
  storage()?.removeItem(KEY);
}

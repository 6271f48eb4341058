import { useCallback, useSyncExternalStore } from 'react';

/**
 * The colour theme: the system's (prefers-color-scheme, the default), or light or dark chosen by the person
 * and remembered in this browser. A choice is `<html data-theme="light|dark">`; without it styles.css
 * follows the system. The stored choice is applied before the first paint by web/public/theme.js (a
 * classic script in <head>: the Content-Security-Policy refuses inline ones), and again when this module is
 * first evaluated.
 */
export type ThemeChoice = 'system' | 'light' | 'dark';

const KEY = 'chat.theme';
const CHANGED = 'chat-theme-changed';

function stored(): ThemeChoice {
  try {
    const value = window.localStorage.getItem(KEY);
    return value === 'light' || value === 'dark' ? value : 'system';
  } catch {
    return 'system';
  }
}

function apply(choice: ThemeChoice): void {
  const root = document.documentElement;
  if (choice === 'system') delete root.dataset.theme;
  else root.dataset.theme = choice;
}

apply(stored());

/** Chooses the theme: applied at once, remembered in this browser (storage refused: for this page). */
export function setTheme(choice: ThemeChoice): void {
  try {
    if (choice === 'system') window.localStorage.removeItem(KEY);
    else window.localStorage.setItem(KEY, choice);
  } catch {
    // Private mode: the choice lasts for this page.
  }
  apply(choice);
  window.dispatchEvent(new Event(CHANGED));
}

function subscribe(onChange: () => void): () => void {
  // Another tab's choice applies here too.
  const onStorage = (event: StorageEvent) => {
    if (event.key !== KEY) return;
    apply(stored());
    onChange();
  };
  window.addEventListener(CHANGED, onChange);
  window.addEventListener('storage', onStorage);
  return () => {
    window.removeEventListener(CHANGED, onChange);
    window.removeEventListener('storage', onStorage);
  };
}

const current = (): ThemeChoice =>
  (document.documentElement.dataset.theme as ThemeChoice | undefined) ??
  'system';

/** The chosen theme and a way to change it. */
export function useTheme(): [ThemeChoice, (choice: ThemeChoice) => void] {
  const choice = useSyncExternalStore(subscribe, current);
  return [choice, useCallback((next: ThemeChoice) => setTheme(next), [])];
}

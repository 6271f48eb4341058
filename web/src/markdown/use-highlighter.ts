import { useSyncExternalStore } from 'react';

type Highlight = (typeof import('./highlighter'))['highlight'];

let loaded: Highlight | null = null;
let loading: Promise<void> | null = null;
const listeners = new Set<() => void>();

/** Fetches the highlighter chunk once (a failure leaves code plain, and is tried again by the next block). */
function load(): void {
  loading ??= import('./highlighter').then(
    (module) => {
      loaded = module.highlight;
      for (const listener of listeners) listener();
    },
    () => {
      loading = null;
    },
  );
}

function subscribe(listener: () => void): () => void {
  listeners.add(listener);
  if (!loaded) load();
  return () => listeners.delete(listener);
}
const subscribeNothing = () => () => undefined;
const current = () => loaded;
const none = () => null;

/**
 * The highlight function, once its chunk has arrived (null until then: the code shows plain meanwhile).
 * Only a code block with a language asks for it, so a page without one never loads the chunk.
 */
export function useHighlighter(wanted: boolean): Highlight | null {
  return useSyncExternalStore(
    wanted ? subscribe : subscribeNothing,
    wanted ? current : none,
  );
}

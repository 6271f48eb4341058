import type { Root } from 'hast';
import { common, createLowlight } from 'lowlight';

/**
 * Syntax highlighting: lowlight (highlight.js's grammars as a hast tree) with highlight.js's common
 * languages. Loaded by a dynamic import() when the first code block appears (use-highlighter.ts), so it is a
 * chunk of its own, never part of the first page load.
 */
const lowlight = createLowlight(common);

/** The code as highlighted tokens, or null for no language, an unknown one, or a failure. */
export function highlight(code: string, language: string): Root | null {
  if (!lowlight.registered(language)) return null;
  try {
    return lowlight.highlight(language, code);
  } catch {
    return null;
  }
}

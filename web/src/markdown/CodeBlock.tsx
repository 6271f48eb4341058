import { memo, useEffect, useMemo, useRef, useState } from 'react';
import { hastToReact } from './hast-to-react';
import { useHighlighter } from './use-highlighter';

const STATUS_MS = 2500;

/**
 * A fenced (or indented) code block of an answer: its language, a Copy code button, and the code,
 * highlighted once the highlighter chunk has arrived (plain until then, and for languages it does not
 * know). Memoised on its code and language, so while an answer streams the finished blocks above are
 * neither re-rendered nor re-highlighted; only the block being written is.
 */
export const CodeBlock = memo(function CodeBlock({
  code,
  language,
}: {
  code: string;
  language?: string;
}) {
  const highlight = useHighlighter(Boolean(language));
  const tokens = useMemo(
    () =>
      highlight && language
        ? (highlight(code, language)?.children ?? null)
        : null,
    [highlight, code, language],
  );
  const codeRef = useRef<HTMLElement>(null);
  const [status, setStatus] = useState('');
  const clearing = useRef<number | undefined>(undefined);
  useEffect(() => () => window.clearTimeout(clearing.current), []);

  const say = (message: string) => {
    setStatus(message);
    window.clearTimeout(clearing.current);
    clearing.current = window.setTimeout(() => setStatus(''), STATUS_MS);
  };
  const copy = async () => {
    try {
      // Undefined outside a secure context; refused without the permission.
      if (!('clipboard' in navigator)) throw new Error('no clipboard');
      await navigator.clipboard.writeText(code);
      say('Copied');
    } catch {
      // No clipboard: the code is selected, for the person's own copy command.
      const selection = window.getSelection();
      if (codeRef.current && selection)
        selection.selectAllChildren(codeRef.current);
      say('Selected: press Ctrl+C (⌘C on a Mac) to copy');
    }
  };

  return (
    <div className="code-block">
      <div className="code-head">
        <span className="code-language">{language ?? 'code'}</span>
        <span className="code-status" role="status">
          {status}
        </span>
        <button type="button" className="code-copy" onClick={() => void copy()}>
          Copy code
        </button>
      </div>
      {/* Focusable so that a block wider than the screen can be scrolled from the keyboard. */}
      <pre tabIndex={0}>
        <code
          ref={codeRef}
          className={
            language
              ? `language-${language}${tokens ? ' hljs' : ''}`
              : undefined
          }
        >
          {tokens ? hastToReact(tokens) : code}
        </code>
      </pre>
    </div>
  );
});

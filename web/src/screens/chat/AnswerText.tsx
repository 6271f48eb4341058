import { lazy, Suspense } from 'react';

/**
 * The Markdown renderer (react-markdown and its plugins) is a chunk of its own, so that the first page
 * (signing in) loads without it; a chat screen asks for it as it opens (`loadMarkdown`).
 */
export const loadMarkdown = () => import('../../markdown/Markdown');
const Markdown = lazy(() =>
  loadMarkdown().then((module) => ({ default: module.Markdown })),
);

/**
 * A model's answer as Markdown, rendered while it streams in ("…" until its first words); as plain text in
 * the moment before the renderer's chunk has arrived.
 */
export function AnswerText({
  text,
  streaming,
}: {
  text: string;
  streaming: boolean;
}) {
  if (streaming && !text) return <div className="text">…</div>;
  return (
    <Suspense fallback={<div className="text">{text}</div>}>
      <Markdown text={text} streaming={streaming} />
    </Suspense>
  );
}

import { Component, lazy, Suspense, type ReactNode } from 'react';

/**
 * The Markdown renderer (react-markdown and its plugins) is a chunk of its own, so that the first page
 * (signing in) loads without it; a chat screen asks for it as it opens (`loadMarkdown`, which never
 * rejects: a chunk that fails to load is reported by the boundary below, where it is rendered).
 */
export const loadMarkdown = () => import('../../markdown/Markdown');
export const preloadMarkdown = () => void loadMarkdown().catch(() => undefined);
const Markdown = lazy(() =>
  loadMarkdown().then((module) => ({ default: module.Markdown })),
);

/**
 * A model's answer as Markdown, rendered while it streams in ("…" until its first words); as plain text in
 * the moment before the renderer's chunk has arrived, and for good if it cannot be loaded (a network
 * failure, or a tab left open across a deploy): the answer stays readable and the app stays up.
 */
export function AnswerText({
  text,
  streaming,
  headingLevel,
}: {
  text: string;
  streaming: boolean;
  /** The level of a Markdown `#` heading (default 2: one below the page's title). */
  headingLevel?: number;
}) {
  if (streaming && !text) return <div className="text">…</div>;
  const plain = <div className="text plain-answer">{text}</div>;
  return (
    <PlainOnFailure fallback={plain}>
      <Suspense fallback={plain}>
        <Markdown
          text={text}
          streaming={streaming}
          headingLevel={headingLevel}
        />
      </Suspense>
    </PlainOnFailure>
  );
}

/** Renders `fallback` instead of children that threw (React's error boundaries are still classes). */
class PlainOnFailure extends Component<
  { fallback: ReactNode; children: ReactNode },
  { failed: boolean }
> {
  state = { failed: false };

  static getDerivedStateFromError(): { failed: boolean } {
    return { failed: true };
  }

  render(): ReactNode {
    return this.state.failed ? this.props.fallback : this.props.children;
  }
}

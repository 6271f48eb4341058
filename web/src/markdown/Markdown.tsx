import type { Element, ElementContent } from 'hast';
import {
  useDeferredValue,
  useId,
  useMemo,
  type ComponentPropsWithoutRef,
  type JSX,
} from 'react';
import ReactMarkdown, {
  type Components,
  type ExtraProps,
  type Options,
  type UrlTransform,
} from 'react-markdown';
import rehypeSanitize, { defaultSchema } from 'rehype-sanitize';
import remarkGfm from 'remark-gfm';
import { CodeBlock } from './CodeBlock';
import {
  rehypeImagesAsLinks,
  rehypeRawAsText,
  rehypeScopeIds,
} from './rehype-plugins';
import { withoutPartialFence } from './streaming';
import { safeUrl } from './urls';
import './markdown.css';

/**
 * An answer's text as GitHub-flavoured Markdown (headings, lists, tables, task lists, strikethrough,
 * footnotes, links, inline and fenced code), safely:
 * - HTML written in the answer is shown as text, never made into elements (rehype-plugins.ts), and
 *   rehype-sanitize (GitHub's rules) cleans what Markdown itself made, as a second line of defence;
 * - a link keeps only an http(s) or mailto address (urls.ts; otherwise it is plain text) and opens in a new
 *   tab with rel="noopener noreferrer";
 * - images are links to the image, not loaded (rehype-plugins.ts says why).
 *
 * While an answer streams it is parsed again as text arrives; React keeps the elements of the blocks
 * already written (nothing is replaced, so nothing flickers), code blocks are memoised (CodeBlock.tsx), an
 * unclosed code fence is already a code block (CommonMark runs it to the end), and a fence line still
 * being typed is held back until it is whole (streaming.ts).
 */
export function Markdown({
  text,
  streaming = false,
  headingLevel = 2,
}: {
  text: string;
  /** The answer is still arriving. */
  streaming?: boolean;
  /** The HTML level of the answer's `#` headings (see `heading`); 2 sits below the page's title. */
  headingLevel?: number;
}) {
  const id = useId();
  // Kept up to date in the background: a burst of deltas never blocks typing or scrolling.
  const shown = useDeferredValue(streaming ? withoutPartialFence(text) : text);
  const rehypePlugins = useMemo(
    () => [
      ...REHYPE_PLUGINS,
      rehypeScopeIds(`md${id.replace(/[^A-Za-z0-9]/g, '')}-`),
    ],
    [id],
  );
  const components = componentsFor(headingLevel);
  // The same element while the text is the same: re-renders of the turn around it cost nothing.
  const rendered = useMemo(
    () => (
      <ReactMarkdown
        remarkPlugins={REMARK_PLUGINS}
        remarkRehypeOptions={REMARK_REHYPE_OPTIONS}
        rehypePlugins={rehypePlugins}
        urlTransform={URL_TRANSFORM}
        components={components}
      >
        {shown}
      </ReactMarkdown>
    ),
    [shown, rehypePlugins, components],
  );
  return <div className="text markdown">{rendered}</div>;
}

type PluggableList = NonNullable<Options['rehypePlugins']>;

const REMARK_PLUGINS: PluggableList = [remarkGfm];
// Footnote ids get the answer's own prefix instead (rehypeScopeIds), after sanitising.
const REMARK_REHYPE_OPTIONS = { clobberPrefix: '' };
const SANITIZE_SCHEMA = {
  ...defaultSchema,
  clobberPrefix: '',
  protocols: {
    ...defaultSchema.protocols,
    href: ['http', 'https', 'mailto'],
    src: ['http', 'https'],
  },
};
const REHYPE_PLUGINS: PluggableList = [
  rehypeRawAsText,
  [rehypeSanitize, SANITIZE_SCHEMA],
  rehypeImagesAsLinks,
];
const URL_TRANSFORM: UrlTransform = (url) => safeUrl(url);

type Props<Tag extends keyof JSX.IntrinsicElements> =
  ComponentPropsWithoutRef<Tag> & ExtraProps;

/** The props for the DOM element: react-markdown's hast `node` is not one. */
function domProps<P extends ExtraProps>(props: P): Omit<P, 'node'> {
  const copy = { ...props };
  delete copy.node;
  return copy;
}

function Link(props: Props<'a'>) {
  const { href, children, ...rest } = domProps(props);
  // No address left (not http(s), mailto or a footnote): the words stay, as plain text.
  if (!href)
    return (
      <span
        className="link-removed"
        title="Link removed: only web (http, https) and mailto links are kept"
      >
        {children}
      </span>
    );
  if (href.startsWith('#'))
    return (
      <a href={href} {...rest}>
        {children}
      </a>
    );
  // The text of a link may name another address than it goes to: the destination is in its tooltip
  // (a shared page shows answers anyone can write through the echo model).
  return (
    <a
      {...rest}
      href={href}
      title={href}
      target="_blank"
      rel="noopener noreferrer"
    >
      {children}
    </a>
  );
}

/** A fenced or indented code block: `pre > code.language-x`, as a CodeBlock. */
function Pre({ node, children }: Props<'pre'>) {
  const code = node?.children.find(
    (child): child is Element =>
      child.type === 'element' && child.tagName === 'code',
  );
  if (!code) return <pre>{children}</pre>;
  const classes = code.properties.className;
  const language = (Array.isArray(classes) ? classes : [])
    .map(String)
    .find((name) => name.startsWith('language-'))
    ?.slice('language-'.length);
  // Markdown ends a block's code with a line break; copied code should not.
  const source = textOf(code.children).replace(/\n$/, '');
  return <CodeBlock code={source} language={language || undefined} />;
}

function textOf(nodes: ElementContent[]): string {
  return nodes
    .map((node) =>
      node.type === 'text'
        ? node.value
        : node.type === 'element'
          ? textOf(node.children)
          : '',
    )
    .join('');
}

/** A task list's box (GFM `- [x]`), read-only, named for screen readers (its item's text follows it). */
function Input(props: Props<'input'>) {
  const rest = domProps(props);
  if (rest.type !== 'checkbox') return null;
  return (
    <input
      type="checkbox"
      checked={Boolean(rest.checked)}
      disabled
      readOnly
      aria-label={rest.checked ? 'Done' : 'Not done'}
    />
  );
}

/** A table scrolls sideways on its own, not the page (focusable, so that works from the keyboard too). */
function Table(props: Props<'table'>) {
  const rest = domProps(props);
  return (
    <div className="table-scroll" tabIndex={0}>
      <table {...rest} />
    </div>
  );
}

/**
 * An answer's headings sit below the page's own (`#` is an h2 by default, capped at h6), so the page's
 * outline stays right for screen readers; their looks follow their Markdown level.
 */
function heading(level: number, base: number) {
  const Tag = `h${Math.min(Math.max(level + base - 1, 1), 6)}` as 'h2';
  return function Heading(props: Props<'h1'>) {
    const { className, ...rest } = domProps(props);
    return (
      <Tag
        {...rest}
        className={[`md-h${level}`, className].filter(Boolean).join(' ')}
      />
    );
  };
}

const cachedComponents = new Map<number, Components>();
function componentsFor(headingLevel: number): Components {
  let components = cachedComponents.get(headingLevel);
  if (!components) {
    components = {
      a: Link,
      pre: Pre,
      table: Table,
      input: Input,
      h1: heading(1, headingLevel),
      h2: heading(2, headingLevel),
      h3: heading(3, headingLevel),
      h4: heading(4, headingLevel),
      h5: heading(5, headingLevel),
      h6: heading(6, headingLevel),
    };
    cachedComponents.set(headingLevel, components);
  }
  return components;
}

import { createElement, Fragment, type ReactNode } from 'react';
import type { ElementContent, Properties, RootContent } from 'hast';

/** The elements a highlighter's output may carry; any other element is replaced by its content. */
const TAGS = new Set(['span', 'b', 'i', 'em', 'strong']);

/**
 * A highlighter's hast tree (lowlight's `<span class="hljs-…">` tokens around the code's text) as React
 * elements, built node by node: text stays text (React escapes it), an element keeps only its tag and its
 * classes. No HTML string is ever parsed, so nothing in the code can become markup.
 */
export function hastToReact(
  nodes: readonly (RootContent | ElementContent)[],
): ReactNode[] {
  return nodes.map((node, index) => {
    if (node.type === 'text') return node.value;
    if (node.type !== 'element') return null;
    const children = hastToReact(node.children);
    return TAGS.has(node.tagName)
      ? createElement(
          node.tagName,
          { key: index, className: classNameOf(node.properties) },
          ...children,
        )
      : createElement(Fragment, { key: index }, ...children);
  });
}

function classNameOf(properties: Properties): string | undefined {
  const value = properties.className;
  if (Array.isArray(value)) return value.join(' ') || undefined;
  return typeof value === 'string' && value ? value : undefined;
}

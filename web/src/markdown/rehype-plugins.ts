import type { Element, ElementContent, Root, RootContent } from 'hast';
import { safeImageUrl } from './urls';

type Parent = Root | Element;
type Child = RootContent | ElementContent;

/**
 * HTML written in an answer, shown as the text it is (`<img src=x onerror=…>` reads as those characters),
 * never parsed into elements: react-markdown hands it over as `raw` nodes, which become text here, before
 * rehype-sanitize (which would otherwise drop them silently).
 */
export function rehypeRawAsText() {
  return (tree: Root) => {
    walk(tree, (node, parent, index) => {
      if ((node as { type: string }).type === 'raw') {
        parent.children[index] = {
          type: 'text',
          value: (node as unknown as { value: string }).value,
        };
      }
    });
  };
}

/**
 * Images are not loaded: a remote image in an answer would be fetched with the reader's address and
 * browser details the moment the answer shows (a tracking pixel; a shared conversation would leak its
 * readers), and an answer can be made to point anywhere. Each image becomes a link to it, named by its
 * alt text ("Image: …"); inside a link (where a link cannot nest) it becomes its alt text. An image whose
 * address is not http(s) is only its alt text.
 */
export function rehypeImagesAsLinks() {
  return (tree: Root) => {
    walk(tree, (node, parent, index, insideLink) => {
      if (node.type !== 'element' || node.tagName !== 'img') return;
      const alt =
        typeof node.properties.alt === 'string' ? node.properties.alt : '';
      const src =
        typeof node.properties.src === 'string'
          ? safeImageUrl(node.properties.src)
          : undefined;
      const label = alt ? `Image: ${alt}` : 'Image';
      parent.children[index] =
        insideLink || !src
          ? { type: 'text', value: alt ? `[${label}]` : '' }
          : {
              type: 'element',
              tagName: 'a',
              properties: { href: src, className: ['image-link'] },
              children: [{ type: 'text', value: label }],
            };
    });
  };
}

/**
 * Gives the ids an answer makes (GFM footnotes: `fn-1`, `fnref-1`, `footnote-label`) a prefix of this
 * answer's own, with the links and ARIA references to them, so two answers on a page never share an id.
 */
export function rehypeScopeIds(prefix: string) {
  return () => (tree: Root) => {
    walk(tree, (node) => {
      if (node.type !== 'element') return;
      // Read as plain values: hast's types for these properties vary with the packages installed.
      const properties = node.properties as Record<string, unknown>;
      if (typeof properties.id === 'string')
        properties.id = prefix + properties.id;
      for (const key of ['ariaDescribedBy', 'ariaLabelledBy']) {
        const value = properties[key];
        const ids = Array.isArray(value)
          ? value.map(String)
          : typeof value === 'string'
            ? value.split(/\s+/).filter(Boolean)
            : [];
        if (ids.length) properties[key] = ids.map((id) => prefix + id);
      }
      if (
        typeof properties.href === 'string' &&
        properties.href.startsWith('#')
      )
        properties.href = `#${prefix}${properties.href.slice(1)}`;
    });
  };
}

/** Visits every node under `parent` (depth first); `insideLink` says whether an `a` element encloses it. */
function walk(
  parent: Parent,
  visit: (
    node: Child,
    parent: Parent,
    index: number,
    insideLink: boolean,
  ) => void,
  insideLink = false,
): void {
  parent.children.forEach((child, index) => {
    visit(child, parent, index, insideLink);
    const node = parent.children[index];
    if (node.type === 'element')
      walk(node, visit, insideLink || node.tagName === 'a');
  });
}

/**
 * The only addresses an answer's links may lead to: absolute http(s) addresses with a host, mailto
 * addresses, and fragments within the answer itself (its footnotes). Anything else (`javascript:`,
 * `data:`, `vbscript:`, `file:`, protocol-relative `//host`, paths of this site) is dropped, so the link
 * renders as inert text.
 *
 * The address is read by the browser's own URL parser (which also removes the tabs, line breaks and
 * leading control characters a browser ignores, so `java\tscript:` is seen as `javascript:`), and the
 * parser's normalised form is what is rendered.
 */
const ALLOWED_PROTOCOLS = new Set(['http:', 'https:', 'mailto:']);

export function safeUrl(value: string): string | undefined {
  const trimmed = value.trim();
  // A fragment only scrolls within the page; Markdown.tsx scopes these to the answer's own ids.
  if (/^#[^\s]*$/.test(trimmed)) return trimmed;
  let url: URL;
  try {
    url = new URL(trimmed);
  } catch {
    return undefined; // relative, protocol-relative or not an address at all
  }
  if (!ALLOWED_PROTOCOLS.has(url.protocol)) return undefined;
  if (url.protocol !== 'mailto:' && !url.hostname) return undefined;
  return url.href;
}

/** An image is shown as a link to it (see Markdown.tsx), only to an http(s) address. */
export function safeImageUrl(value: string): string | undefined {
  const url = safeUrl(value);
  return url && /^https?:/.test(url) ? url : undefined;
}

import './plain-text.css';

/**
 * A person's own message as they wrote it: line breaks, blank lines and indentation kept, nothing
 * interpreted as Markdown or HTML.
 */
export function PlainText({ text }: { text: string }) {
  return <p className="text plain-text">{text}</p>;
}

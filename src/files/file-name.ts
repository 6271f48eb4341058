const MAX_NAME_CHARACTERS = 200;

/**
 * The client's file name made safe to store and show: no directories, no control or bidi-override
 * characters, NFC, at most 200 characters (the extension kept), never empty.
 */
export function sanitizeFileName(name: string | undefined): string {
  const base = (name ?? '').split(/[\\/]/).pop() ?? '';
  const clean = base
    .normalize('NFC')
    .replace(/[\p{Cc}\u200e\u200f\u202a-\u202e\u2066-\u2069]/gu, '')
    .trim()
    .replace(/^\.+$/, '');
  const characters = [...clean];
  if (characters.length === 0) return 'upload';
  if (characters.length <= MAX_NAME_CHARACTERS) return clean;
  const extension = extensionOf(clean);
  const keep = MAX_NAME_CHARACTERS - (extension ? extension.length + 1 : 0);
  return `${characters.slice(0, keep).join('')}${extension ? `.${extension}` : ''}`;
}

/** The lower-case extension without the dot, or '' when the name has none. */
export function extensionOf(name: string): string {
  const match = /\.([^.]{1,16})$/.exec(name);
  return match && match.index > 0 ? match[1].toLowerCase() : '';
}

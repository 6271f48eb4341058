import { extensionOf, sanitizeFileName } from './file-name';

describe('file names', () => {
  it('drops directories, control and bidi characters', () => {
    expect(sanitizeFileName('../../etc/passwd')).toBe('passwd');
    expect(sanitizeFileName('C:\\Users\\me\\report.pdf')).toBe('report.pdf');
    expect(sanitizeFileName('evil\u202Etxt.exe')).toBe('eviltxt.exe');
    expect(sanitizeFileName('line\nbreak.md')).toBe('linebreak.md');
  });

  it('never answers an empty name, and keeps the extension when shortening', () => {
    expect(sanitizeFileName('')).toBe('upload');
    expect(sanitizeFileName('..')).toBe('upload');
    expect(sanitizeFileName(undefined)).toBe('upload');
    const long = sanitizeFileName(`${'n'.repeat(300)}.docx`);
    expect([...long]).toHaveLength(200);
    expect(long.endsWith('.docx')).toBe(true);
  });

  it('reads extensions in lower case, ignoring leading dots', () => {
    expect(extensionOf('Notes.MD')).toBe('md');
    expect(extensionOf('.bashrc')).toBe('');
    expect(extensionOf('archive.tar.gz')).toBe('gz');
    expect(extensionOf('noext')).toBe('');
  });
});

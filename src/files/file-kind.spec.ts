import { createHash } from 'node:crypto';
import { buildDocx, buildZip } from '../../test/support/zip';
import { ContentInspector } from './file-kind';

/** Feeds content in chunks of `size` bytes, as a stream would, and runs the final checks. */
async function inspect(
  content: Buffer,
  name: string,
  size = 3,
  maxBytes = 1024 * 1024,
) {
  const inspector = new ContentInspector(
    content.subarray(0, 5),
    name,
    maxBytes,
  );
  for (let at = 0; at < content.length; at += size)
    inspector.update(content.subarray(at, at + size));
  return { kind: inspector.kind, ...(await inspector.finish()) };
}

/** What `action` throws (undefined when it returns), to match as the rejections below are. */
function thrownBy(action: () => unknown): unknown {
  try {
    action();
  } catch (error) {
    return error;
  }
  return undefined;
}

describe('ContentInspector', () => {
  it('accepts UTF-8 whose characters are split across chunks, and hashes and counts the bytes', async () => {
    const content = Buffer.from('héllo wörld ✓ 😀');
    expect(await inspect(content, 'notes.md', 1)).toEqual({
      kind: 'markdown',
      size: content.length,
      sha256: createHash('sha256').update(content).digest('hex'),
    });
  });

  it('accepts UTF-16 with its byte order mark, in either order, and refuses it with NUL or cut short', async () => {
    const le = Buffer.concat([
      Buffer.from([0xff, 0xfe]),
      Buffer.from('héllo ✓', 'utf16le'),
    ]);
    const be = Buffer.from(le).swap16();
    expect((await inspect(le, 'a.txt')).kind).toBe('text');
    expect(
      new ContentInspector(le.subarray(0, 6), 'a.txt', 100).mediaType,
    ).toBe('text/plain; charset=utf-16le');
    expect(
      new ContentInspector(Buffer.from('plain'), 'a.md', 100).mediaType,
    ).toBe('text/markdown; charset=utf-8');
    expect((await inspect(be, 'a.md')).kind).toBe('markdown');
    await expect(
      inspect(Buffer.concat([le, Buffer.from([0, 0])]), 'a.txt'),
    ).rejects.toMatchObject({ code: 'unsupported_media_type' });
    await expect(
      inspect(le.subarray(0, le.length - 1), 'a.txt'),
    ).rejects.toMatchObject({ code: 'unsupported_media_type' });
  });

  it('refuses text that is not UTF-8, holds NUL, or ends inside a character', async () => {
    for (const content of [
      Buffer.from([0x61, 0xff, 0x62]),
      Buffer.from('a\u0000b'),
      Buffer.from([0x61, 0xe2, 0x82]),
    ]) {
      await expect(inspect(content, 'x.txt')).rejects.toMatchObject({
        code: 'unsupported_media_type',
      });
    }
  });

  it('refuses more than the limit as soon as the byte past it arrives', () => {
    const inspector = new ContentInspector(Buffer.from('aaaaa'), 'a.txt', 10);
    inspector.update(Buffer.alloc(10, 0x61));
    expect(thrownBy(() => inspector.update(Buffer.from('a')))).toMatchObject({
      code: 'payload_too_large',
    });
  });

  it('reads a DOCX from the zip directory at its end, also when the file is larger than the kept tail', async () => {
    expect(
      (
        await inspect(
          buildDocx(3 * 1024 * 1024),
          'big.docx',
          64 * 1024,
          4 * 1024 * 1024,
        )
      ).kind,
    ).toBe('docx');
    await expect(
      inspect(buildZip([{ name: 'a.txt', data: Buffer.from('x') }]), 'a.docx'),
    ).rejects.toMatchObject({ code: 'unsupported_media_type' });
  });

  it('decides from the first bytes and the name, before the rest arrives', () => {
    expect(
      new ContentInspector(Buffer.from('%PDF-1.7'), 'report', 100).kind,
    ).toBe('pdf');
    expect(
      thrownBy(
        () => new ContentInspector(Buffer.from('%PDF-1.7'), 'report.txt', 100),
      ),
    ).toMatchObject({ code: 'unsupported_media_type' });
    expect(
      thrownBy(() => new ContentInspector(Buffer.from('hello'), 'run.sh', 100)),
    ).toMatchObject({ code: 'unsupported_media_type' });
    expect(
      thrownBy(() => new ContentInspector(Buffer.alloc(0), 'empty.txt', 100)),
    ).toMatchObject({ code: 'validation_failed' });
  });
});

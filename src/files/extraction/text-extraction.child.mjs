// Runs as a child process (see text-extractor.ts): one file's bytes in over IPC, its text out. A process of
// its own, so that whatever a crafted file makes the parsers allocate (heap or buffers) ends this process,
// never the service. Plain JavaScript (ES module) so that it runs as it is, under ts-jest and from dist
// alike; pdfjs-dist is ESM-only.

/** More text than this is refused (a 20 MB text file has at most this many characters). */
const MAX_TEXT_CHARS = 20 * 1024 * 1024;

/** A failure the user is told about, as a stable code. */
class ExtractionFailure extends Error {
  constructor(code) {
    super(code);
    this.code = code;
  }
}

/** UTF-8 (with or without BOM) or UTF-16 with its BOM; the upload already checked the encoding. */
function decodeText(bytes) {
  if (bytes[0] === 0xff && bytes[1] === 0xfe)
    return new TextDecoder('utf-16le').decode(bytes.subarray(2));
  if (bytes[0] === 0xfe && bytes[1] === 0xff)
    return new TextDecoder('utf-16be').decode(bytes.subarray(2));
  return new TextDecoder('utf-8').decode(
    bytes.subarray(
      bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf ? 3 : 0,
    ),
  );
}

async function pdfText(bytes) {
  const pdfjs = await import('pdfjs-dist/legacy/build/pdf.mjs');
  let document;
  try {
    document = await pdfjs.getDocument({
      data: bytes,
      isEvalSupported: false,
      disableFontFace: true,
      useSystemFonts: false,
      stopAtErrors: false,
      verbosity: 0,
    }).promise;
  } catch (error) {
    if (error?.name === 'PasswordException')
      throw new ExtractionFailure('pdf_encrypted');
    throw new ExtractionFailure('file_unreadable');
  }
  try {
    const pages = [];
    for (let number = 1; number <= document.numPages; number += 1) {
      const page = await document.getPage(number);
      const content = await page.getTextContent();
      let text = '';
      for (const item of content.items) {
        if (typeof item.str !== 'string') continue;
        text += item.str + (item.hasEOL ? '\n' : '');
      }
      pages.push(text.trim());
      page.cleanup();
    }
    const text = pages.join('\n\n').trim();
    if (!text) throw new ExtractionFailure('pdf_no_text');
    return { text, pages: document.numPages };
  } finally {
    await document.destroy();
  }
}

async function docxText(bytes) {
  const mammoth = (await import('mammoth')).default;
  try {
    const result = await mammoth.extractRawText({
      buffer: Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength),
    });
    return { text: result.value.replace(/\n{3,}/g, '\n\n').trim() };
  } catch {
    throw new ExtractionFailure('file_unreadable');
  }
}

async function extract({ kind, bytes }) {
  const result =
    kind === 'pdf'
      ? await pdfText(bytes)
      : kind === 'docx'
        ? await docxText(bytes)
        : { text: decodeText(bytes) };
  if (result.text.length > MAX_TEXT_CHARS)
    throw new ExtractionFailure('text_too_large');
  return result;
}

// The service went away: nothing is waiting for the answer.
process.once('disconnect', () => process.exit(0));
process.once('message', (job) => {
  extract({ kind: job.kind, bytes: new Uint8Array(job.bytes) }).then(
    (result) => process.send({ ok: true, ...result }, () => process.exit(0)),
    (error) =>
      process.send(
        {
          ok: false,
          code:
            error instanceof ExtractionFailure
              ? error.code
              : 'extraction_failed',
        },
        () => process.exit(0),
      ),
  );
});

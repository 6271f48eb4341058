// Runs in a worker thread (see text-extractor.ts): one file's bytes in, its text out. Plain JavaScript
// (ES module) so that it runs as it is, under ts-jest and from dist alike; pdfjs-dist is ESM-only.
import { parentPort, workerData } from 'node:worker_threads';

/** A failure the user is told about, as a stable code. */
class ExtractionFailure extends Error {
  constructor(code) {
    super(code);
    this.code = code;
  }
}

/** UTF-8 (with or without BOM) or UTF-16 with its BOM; the upload already checked the encoding. */
function decodeText(bytes) {
  if (bytes[0] === 0xff && bytes[1] === 0xfe) return new TextDecoder('utf-16le').decode(bytes.subarray(2));
  if (bytes[0] === 0xfe && bytes[1] === 0xff) return new TextDecoder('utf-16be').decode(bytes.subarray(2));
  return new TextDecoder('utf-8').decode(bytes.subarray(bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf ? 3 : 0));
}

async function pdfText(bytes) {
  const pdfjs = await import('pdfjs-dist/legacy/build/pdf.mjs');
  let document;
  try {
    document = await pdfjs.getDocument({ data: bytes, isEvalSupported: false, disableFontFace: true, useSystemFonts: false, stopAtErrors: false, verbosity: 0 }).promise;
  } catch (error) {
    if (error?.name === 'PasswordException') throw new ExtractionFailure('pdf_encrypted');
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
    const result = await mammoth.extractRawText({ buffer: Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength) });
    return { text: result.value.replace(/\n{3,}/g, '\n\n').trim() };
  } catch {
    throw new ExtractionFailure('file_unreadable');
  }
}

async function extract({ kind, bytes }) {
  if (kind === 'pdf') return pdfText(bytes);
  if (kind === 'docx') return docxText(bytes);
  return { text: decodeText(bytes) };
}

extract(workerData).then(
  (result) => parentPort.postMessage({ ok: true, ...result }),
  (error) => parentPort.postMessage({ ok: false, code: error instanceof ExtractionFailure ? error.code : 'extraction_failed' }),
);

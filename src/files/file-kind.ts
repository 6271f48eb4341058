import { createReadStream } from 'node:fs';
import { open as openFile } from 'node:fs/promises';
import { promisify } from 'node:util';
import yauzl, { Entry, ZipFile } from 'yauzl';
import { AppError } from '../common/errors/app-error';
import { extensionOf } from './file-name';

export type FileKind = 'pdf' | 'docx' | 'text' | 'markdown';

export const MEDIA_TYPES: Record<FileKind, string> = {
  pdf: 'application/pdf',
  docx: 'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
  text: 'text/plain; charset=utf-8',
  markdown: 'text/markdown; charset=utf-8',
};

const ACCEPTED = 'Accepted: plain text (.txt), Markdown (.md, .markdown), PDF (.pdf) and Word documents (.docx).';
/** Extensions a name may carry for each kind; a name without an extension is judged by content alone. */
const EXTENSIONS: Record<FileKind, string[]> = { pdf: ['pdf'], docx: ['docx'], text: ['txt', 'text'], markdown: ['md', 'markdown'] };
const KNOWN_EXTENSIONS = new Set(Object.values(EXTENSIONS).flat());

/** A DOCX is inspected through the zip's central directory only: nothing is decompressed. */
const MAX_ZIP_ENTRIES = 2_000;
const MAX_DECLARED_BYTES = 256 * 1024 * 1024;
const MAX_RATIO = 100;

const openZip = promisify<string, yauzl.Options, ZipFile>(yauzl.open);

/**
 * The kind of an uploaded file, decided from its content (the client's Content-Type is never read):
 * PDF by its signature, DOCX as a zip holding word/document.xml, text and Markdown as valid UTF-8 without
 * NUL (Markdown by its .md/.markdown name). Anything else, or a name whose extension says otherwise: 415.
 */
export async function detectKind(path: string, name: string): Promise<FileKind> {
  const extension = extensionOf(name);
  if (extension && !KNOWN_EXTENSIONS.has(extension)) throw refused(`.${extension} files are not accepted.`);
  const head = await readHead(path, 5);
  let kind: FileKind;
  if (head.toString('latin1') === '%PDF-') kind = 'pdf';
  else if (head.subarray(0, 4).equals(Buffer.from('PK\u0003\u0004', 'latin1'))) {
    const problem = await docxProblem(path);
    if (problem) throw refused(`The file is a zip archive but not a Word document: ${problem}.`);
    kind = 'docx';
  } else if (await isUtf8Text(path)) kind = extension === 'md' || extension === 'markdown' ? 'markdown' : 'text';
  else throw refused('The content is neither UTF-8 text, a PDF nor a Word document.');
  if (extension && !EXTENSIONS[kind].includes(extension)) throw refused(`The content is ${describe(kind)} but the name ends in .${extension}.`);
  return kind;
}

function refused(reason: string): AppError {
  return new AppError('unsupported_media_type', `${reason} ${ACCEPTED}`);
}

function describe(kind: FileKind): string {
  return { pdf: 'a PDF', docx: 'a Word document', text: 'text', markdown: 'text' }[kind];
}

async function readHead(path: string, bytes: number): Promise<Buffer> {
  const file = await openFile(path, 'r');
  try {
    const buffer = Buffer.alloc(bytes);
    const { bytesRead } = await file.read(buffer, 0, bytes, 0);
    return buffer.subarray(0, bytesRead);
  } finally {
    await file.close();
  }
}

async function isUtf8Text(path: string): Promise<boolean> {
  const decoder = new TextDecoder('utf-8', { fatal: true });
  try {
    for await (const chunk of createReadStream(path)) {
      if ((chunk as Buffer).includes(0)) return false;
      decoder.decode(chunk as Buffer, { stream: true });
    }
    decoder.decode();
    return true;
  } catch {
    return false;
  }
}

/** Why a zip is not an acceptable DOCX (a reason for the client), or null. */
async function docxProblem(path: string): Promise<string | null> {
  let zip: ZipFile;
  try {
    zip = await openZip(path, { lazyEntries: true, autoClose: true, strictFileNames: false, validateEntrySizes: true });
  } catch {
    return 'its directory cannot be read';
  }
  return new Promise((resolve) => {
    let entries = 0;
    let declared = 0;
    let hasDocument = false;
    const finish = (problem: string | null) => {
      zip.removeAllListeners();
      zip.on('error', () => undefined);
      zip.close();
      resolve(problem);
    };
    zip.on('entry', (entry: Entry) => {
      entries += 1;
      declared += entry.uncompressedSize;
      if (entries > MAX_ZIP_ENTRIES) return finish(`more than ${MAX_ZIP_ENTRIES} entries`);
      if (declared > MAX_DECLARED_BYTES) return finish(`it would expand to more than ${MAX_DECLARED_BYTES / 1024 / 1024} MiB`);
      if (entry.uncompressedSize > 1024 * 1024 && entry.uncompressedSize > MAX_RATIO * Math.max(1, entry.compressedSize)) {
        return finish(`${entry.fileName} is compressed more than ${MAX_RATIO} to 1 (a zip bomb)`);
      }
      if (entry.fileName === 'word/document.xml') hasDocument = true;
      zip.readEntry();
    });
    zip.on('end', () => finish(hasDocument ? null : 'it has no word/document.xml'));
    zip.on('error', () => finish('its directory is damaged'));
    zip.readEntry();
  });
}

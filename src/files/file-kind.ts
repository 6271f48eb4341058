import { createHash } from 'node:crypto';
import { Readable } from 'node:stream';
import { promisify, TextDecoder } from 'node:util';
import yauzl, { Entry, ZipFile } from 'yauzl';
import { AppError } from '../common/errors/app-error';
import { extensionOf } from './file-name';

export const FILE_KINDS = ['pdf', 'docx', 'text', 'markdown'] as const;
export type FileKind = (typeof FILE_KINDS)[number];

export const MEDIA_TYPES: Record<FileKind, string> = {
  pdf: 'application/pdf',
  docx: 'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
  text: 'text/plain; charset=utf-8',
  markdown: 'text/markdown; charset=utf-8',
};

/** How many leading bytes decide the kind: `%PDF-` and a zip's `PK\3\4`. */
export const HEAD_BYTES = 5;

const ACCEPTED =
  'Accepted: plain text (.txt), Markdown (.md, .markdown), PDF (.pdf) and Word documents (.docx).';
/** Extensions a name may carry for each kind; a name without an extension is judged by content alone. */
const EXTENSIONS: Record<FileKind, string[]> = {
  pdf: ['pdf'],
  docx: ['docx'],
  text: ['txt', 'text'],
  markdown: ['md', 'markdown'],
};
const KNOWN_EXTENSIONS = new Set(Object.values(EXTENSIONS).flat());

/** A DOCX is inspected through the zip's central directory only: nothing is decompressed. */
const MAX_ZIP_ENTRIES = 2_000;
const MAX_DECLARED_BYTES = 256 * 1024 * 1024;
const MAX_RATIO = 100;
/** The end of a zip kept while it streams past; a directory of MAX_ZIP_ENTRIES entries fits well inside. */
const ZIP_TAIL_BYTES = 1024 * 1024;

const fromReader = promisify<
  yauzl.RandomAccessReader,
  number,
  yauzl.Options,
  ZipFile
>(yauzl.fromRandomAccessReader);

/**
 * Decides an upload's kind while it streams past, from its content (the client's Content-Type is never
 * read): PDF by its signature, DOCX as a zip holding word/document.xml (checked from the zip's directory at
 * the end), text and Markdown as valid UTF-8 (or UTF-16 with its byte order mark) without NUL, checked
 * chunk by chunk (Markdown by its
 * .md/.markdown name). Anything else, or a name whose extension says otherwise: 415. Counts and hashes
 * the bytes; more than `maxBytes` is a 413. Nothing is held in memory but a zip's last megabyte.
 */
export class ContentInspector {
  readonly kind: FileKind;
  private readonly hash = createHash('sha256');
  private readonly decoder: TextDecoder | null;
  private readonly encoding: 'utf-8' | 'utf-16le' | 'utf-16be';
  private readonly tail: Buffer[] = [];
  private tailBytes = 0;
  private bytes = 0;

  /** `head`: the first HEAD_BYTES bytes or more (fewer only for a shorter file). */
  constructor(
    head: Buffer,
    name: string,
    private readonly maxBytes: number,
  ) {
    if (head.length === 0)
      throw new AppError('validation_failed', 'The file is empty.', {
        errors: [
          {
            field: 'file',
            code: 'empty_file',
            message: 'file must not be empty',
          },
        ],
      });
    const extension = extensionOf(name);
    if (extension && !KNOWN_EXTENSIONS.has(extension))
      throw refused(`.${extension} files are not accepted.`);
    this.kind = kindFromHead(head, extension);
    if (extension && !EXTENSIONS[this.kind].includes(extension))
      throw refused(
        `The content is ${describe(this.kind)} but the name ends in .${extension}.`,
      );
    this.encoding = textEncoding(head);
    this.decoder =
      this.kind === 'text' || this.kind === 'markdown'
        ? new TextDecoder(this.encoding, { fatal: true })
        : null;
  }

  /** The stored content type: a UTF-16 text says so, so that it is served with its own charset. */
  get mediaType(): string {
    return this.decoder && this.encoding !== 'utf-8'
      ? MEDIA_TYPES[this.kind].replace(
          'charset=utf-8',
          `charset=${this.encoding}`,
        )
      : MEDIA_TYPES[this.kind];
  }

  /** Takes the next chunk; throws the refusal as soon as the content shows it. */
  update(chunk: Buffer): void {
    this.bytes += chunk.length;
    if (this.bytes > this.maxBytes) throw tooLarge(this.maxBytes);
    this.hash.update(chunk);
    if (this.decoder) this.checkText(chunk, true);
    else if (this.kind === 'docx') this.keepTail(chunk);
  }

  /** After the last chunk: the final checks, then the size and the SHA-256. */
  async finish(): Promise<{ size: number; sha256: string }> {
    if (this.decoder) this.checkText(Buffer.alloc(0), false);
    if (this.kind === 'docx') {
      const problem = await zipProblem(Buffer.concat(this.tail), this.bytes);
      if (problem)
        throw refused(
          `The file is a zip archive but not a Word document: ${problem}.`,
        );
    }
    return { size: this.bytes, sha256: this.hash.digest('hex') };
  }

  private checkText(chunk: Buffer, more: boolean): void {
    try {
      // UTF-16 has zero bytes in every ASCII character: there NUL is looked for in the decoded text.
      if (this.encoding === 'utf-8' && chunk.includes(0))
        throw new Error('NUL');
      const decoded = this.decoder!.decode(chunk, { stream: more });
      if (this.encoding !== 'utf-8' && decoded.includes('\u0000'))
        throw new Error('NUL');
    } catch {
      throw refused(
        'The content is neither UTF-8 text, a PDF nor a Word document.',
      );
    }
  }

  private keepTail(chunk: Buffer): void {
    this.tail.push(chunk);
    this.tailBytes += chunk.length;
    while (
      this.tail.length > 1 &&
      this.tailBytes - this.tail[0].length >= ZIP_TAIL_BYTES
    )
      this.tailBytes -= this.tail.shift()!.length;
  }
}

export function tooLarge(maxBytes: number): AppError {
  return new AppError(
    'payload_too_large',
    `The file is larger than ${maxBytes} bytes.`,
  );
}

/** Text is UTF-8 (a BOM allowed) unless it starts with a UTF-16 byte order mark. */
function textEncoding(head: Buffer): 'utf-8' | 'utf-16le' | 'utf-16be' {
  if (head[0] === 0xff && head[1] === 0xfe) return 'utf-16le';
  if (head[0] === 0xfe && head[1] === 0xff) return 'utf-16be';
  return 'utf-8';
}

function kindFromHead(head: Buffer, extension: string): FileKind {
  if (head.subarray(0, 5).toString('latin1') === '%PDF-') return 'pdf';
  if (head.subarray(0, 4).equals(Buffer.from('PK\u0003\u0004', 'latin1')))
    return 'docx';
  return extension === 'md' || extension === 'markdown' ? 'markdown' : 'text';
}

function refused(reason: string): AppError {
  return new AppError('unsupported_media_type', `${reason} ${ACCEPTED}`);
}

function describe(kind: FileKind): string {
  return {
    pdf: 'a PDF',
    docx: 'a Word document',
    text: 'not a PDF or a Word document',
    markdown: 'not a PDF or a Word document',
  }[kind];
}

/** yauzl reads the zip's directory from the kept tail; a directory that starts before it is refused. */
class TailReader extends yauzl.RandomAccessReader {
  constructor(
    private readonly tail: Buffer,
    private readonly totalSize: number,
  ) {
    super();
  }

  override _readStreamForRange(start: number, end: number): Readable {
    const offset = this.totalSize - this.tail.length;
    if (start < offset) {
      return new Readable({
        read() {
          this.destroy(
            new Error('the zip directory is not within the inspected tail'),
          );
        },
      });
    }
    return Readable.from([this.tail.subarray(start - offset, end - offset)]);
  }
}

/** Why a zip is not an acceptable DOCX (a reason for the client), or null. */
async function zipProblem(
  tail: Buffer,
  totalSize: number,
): Promise<string | null> {
  let zip: ZipFile;
  try {
    zip = await fromReader(new TailReader(tail, totalSize), totalSize, {
      lazyEntries: true,
      autoClose: true,
      strictFileNames: false,
      validateEntrySizes: true,
    });
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
      if (entries > MAX_ZIP_ENTRIES)
        return finish(`more than ${MAX_ZIP_ENTRIES} entries`);
      if (declared > MAX_DECLARED_BYTES)
        return finish(
          `it would expand to more than ${MAX_DECLARED_BYTES / 1024 / 1024} MiB`,
        );
      if (
        entry.uncompressedSize > 1024 * 1024 &&
        entry.uncompressedSize > MAX_RATIO * Math.max(1, entry.compressedSize)
      ) {
        return finish(
          `${entry.fileName} is compressed more than ${MAX_RATIO} to 1 (a zip bomb)`,
        );
      }
      if (entry.fileName === 'word/document.xml') hasDocument = true;
      zip.readEntry();
    });
    zip.on('end', () =>
      finish(hasDocument ? null : 'it has no word/document.xml'),
    );
    zip.on('error', () => finish('its directory is damaged'));
    zip.readEntry();
  });
}

import { Injectable } from '@nestjs/common';
import { SessionUser } from '../../auth/session-user';
import { isUuid } from '../../common/ids';
import { relevanceQuery } from '../context/context-selection';
import { FilesRepository } from '../files.repository';

/** Most passages one search answers. */
const MAX_PASSAGES = 5;
/** A passage's text is cut here (with a marker): the model gets the place, and can search closer. */
const MAX_PASSAGE_CHARS = 1_500;

export interface Passage {
  fileId: string;
  fileName: string;
  /** Where the passage is in its file: the stored chunk's number (from 0) and its first character. */
  position: { chunk: number; offset: number };
  text: string;
}

/**
 * Full-text search over the caller's own files' extracted text (the `files.search` tool): each word of the
 * query matches by prefix, in any language; only files whose text is ready, only the caller's.
 */
@Injectable()
export class FileSearchService {
  constructor(private readonly files: FilesRepository) {}

  async search(
    user: SessionUser,
    input: { query: string; fileIds?: string[] },
  ): Promise<Passage[]> {
    const query = relevanceQuery(input.query);
    // Ids that cannot be files match nothing, as files of someone else do.
    const fileIds = input.fileIds?.filter(isUuid) ?? null;
    if (!query || fileIds?.length === 0) return [];
    const chunks = await this.files.searchOwnedChunks(
      user.id,
      query,
      fileIds,
      MAX_PASSAGES,
    );
    return chunks.map((chunk) => ({
      fileId: chunk.fileId,
      fileName: chunk.fileName,
      position: { chunk: chunk.index, offset: chunk.charOffset },
      text: cut(chunk.text, MAX_PASSAGE_CHARS),
    }));
  }
}

/** At most `max` characters (never half a surrogate pair), with a marker when cut. */
function cut(text: string, max: number): string {
  if (text.length <= max) return text;
  const end = /[\ud800-\udbff]/.test(text[max - 1]) ? max - 1 : max;
  return `${text.slice(0, end)} [...]`;
}

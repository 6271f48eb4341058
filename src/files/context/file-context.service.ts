import { Injectable } from '@nestjs/common';
import { SessionUser } from '../../auth/session-user';
import { AppError } from '../../common/errors/app-error';
import { isUuid } from '../../common/ids';
import { FilesRepository } from '../files.repository';
import {
  contextSection,
  relevanceQuery,
  selectChunks,
} from './context-selection';

/** The attached files' text for a run: the section the model receives, and the files it names. */
export interface FileContext {
  section: string;
  files: { id: string; name: string; kind: string }[];
}

// docs/adr/0046-file-context-for-chat.md
@Injectable()
export class FileContextService {
  constructor(private readonly files: FilesRepository) {}

  /**
   * The text of the caller's files `fileIds` within `budgetBytes`: all of it when it fits, else the start
   * of each file and the parts most relevant to `question` (full-text ranking over the stored chunks).
   * 404 for a file that is not the caller's, 409 while its text is pending, 422 when extraction failed,
   * 413 when the budget does not hold even the start of each file.
   */
  async contextFor(
    user: SessionUser,
    fileIds: string[],
    question: string,
    budgetBytes: number,
  ): Promise<FileContext> {
    const found = fileIds.every(isUuid)
      ? await this.files.findOwnedForContext(user.id, fileIds)
      : [];
    const byId = new Map(found.map((file) => [file.id, file]));
    const files = fileIds.map((id) => {
      const file = byId.get(id);
      if (!file)
        throw new AppError('not_found', `No such file: ${id}.`, {
          errors: [
            { field: 'fileIds', code: 'not_found', message: `no file ${id}` },
          ],
        });
      if (file.textStatus === 'pending')
        throw new AppError(
          'file_not_ready',
          `The text of ${file.originalName} (${id}) is still being extracted. Try again in a moment (GET /v1/files/${id} shows its status).`,
        );
      if (file.textStatus === 'failed')
        throw new AppError(
          'file_text_failed',
          `${file.originalName} (${id}) has no usable text (${file.textError}).`,
        );
      return file;
    });
    const ranked = await this.files.chunkRanks(
      fileIds,
      relevanceQuery(question),
    );
    const starts = ranked.reduce(
      (sum, chunk) => sum + (chunk.index === 0 ? chunk.bytes : 0),
      0,
    );
    if (starts > budgetBytes) {
      throw new AppError(
        'messages_too_large',
        `The conversation leaves no room in the model's context window for ` +
          `the attached files (not even their first part). Start a new ` +
          `conversation, attach fewer files, or use a model with a larger ` +
          `window.`,
      );
    }
    const chosen = selectChunks(ranked, fileIds, budgetBytes);
    const texts = new Map<string, { index: number; text: string }[]>();
    for (const row of await this.files.chunkTexts(
      chosen.map((chunk) => chunk.fileId),
      chosen.map((chunk) => chunk.index),
    )) {
      texts.set(row.fileId, [
        ...(texts.get(row.fileId) ?? []),
        { index: row.index, text: row.text },
      ]);
    }
    const chunkCounts = new Map<string, number>();
    for (const chunk of ranked)
      chunkCounts.set(chunk.fileId, (chunkCounts.get(chunk.fileId) ?? 0) + 1);
    const named = files.map((file) => ({
      id: file.id,
      name: file.originalName,
      kind: file.kind,
    }));
    return {
      section: contextSection(
        named.map((file) => ({
          ...file,
          chunkCount: chunkCounts.get(file.id) ?? 0,
        })),
        texts,
      ),
      files: named,
    };
  }
}

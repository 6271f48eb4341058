import { Injectable } from '@nestjs/common';
import { SessionUser } from '../../auth/session-user';
import { FileSearchService } from '../../files/search/file-search.service';
import { Tool, ToolError } from '../tool';

/** The built-in `files.search`: full-text search over the caller's own files (FileSearchService). */
@Injectable()
export class FilesSearchTool implements Tool {
  readonly id = 'files.search';
  readonly title = 'Search my files';
  readonly description =
    "Full-text search over the text of the user's uploaded files (PDF, Word, text, Markdown). Answers the " +
    'best passages, each with its file id, file name and position (chunk number and character offset).';
  readonly source = 'builtin';
  readonly approval = 'auto';
  /** Set from the catalog's `tools` section by the registry. */
  readonly price = 0;
  readonly inputSchema = {
    type: 'object',
    properties: {
      query: {
        type: 'string',
        minLength: 1,
        maxLength: 500,
        description:
          'Words to look for; each matches by prefix, in any language.',
      },
      fileIds: {
        type: 'array',
        items: { type: 'string', format: 'uuid' },
        maxItems: 32,
        description:
          'Only these files (ids from GET /v1/files); all of them when left out.',
      },
    },
    required: ['query'],
    additionalProperties: false,
  };

  constructor(private readonly files: FileSearchService) {}

  async execute(
    caller: SessionUser,
    args: Record<string, unknown>,
  ): Promise<string> {
    const { query, fileIds } = args;
    if (typeof query !== 'string' || query.trim() === '')
      throw new ToolError('query must be a non-empty string');
    if (
      fileIds !== undefined &&
      !(Array.isArray(fileIds) && fileIds.every((id) => typeof id === 'string'))
    )
      throw new ToolError('fileIds must be an array of file ids');
    const passages = await this.files.search(caller, { query, fileIds });
    return JSON.stringify({ passages });
  }
}

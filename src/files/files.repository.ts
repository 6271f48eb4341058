import { Injectable } from '@nestjs/common';
import { Cursor, olderThan } from '../common/pagination';
import { PrismaService } from '../infra/prisma/prisma.service';
import { FileKind } from './file-kind';

export interface NewFile {
  ownerId: string;
  storageKey: string;
  originalName: string;
  kind: FileKind;
  mediaType: string;
  sizeBytes: number;
  sha256: string;
}

const FILE = {
  id: true,
  originalName: true,
  kind: true,
  mediaType: true,
  sizeBytes: true,
  sha256: true,
  createdAt: true,
  textStatus: true,
  textChars: true,
  textPages: true,
  textError: true,
} as const;

const CHUNKS_PER_INSERT = 1_000;
/** Storing the text of a large file (thousands of chunks, each with its tsvector) takes longer than a request's transaction. */
const SAVE_TEXT_TIMEOUT_MS = 120_000;

/** A file whose text is to be extracted, as the claim answers it. */
export interface PendingText {
  id: string;
  storageKey: string;
  kind: FileKind;
  sizeBytes: number;
  /** This claim included. */
  attempts: number;
}

@Injectable()
export class FilesRepository {
  constructor(private readonly prisma: PrismaService) {}

  /**
   * Records the file only if it fits the owner's storage quota. The owner's row is locked first, so two
   * uploads finishing together are checked one after the other. Null when it does not fit, or when the owner was
   * erased while the upload streamed in (its object is then removed like one over quota).
   */
  async insertWithinQuota(file: NewFile) {
    return this.prisma.$transaction(async (db) => {
      await db.$queryRaw`SELECT 1 FROM "User" WHERE id = ${file.ownerId}::uuid FOR UPDATE`;
      const [fits] = await db.$queryRaw<{ fits: boolean }[]>`
        SELECT COALESCE((SELECT SUM("sizeBytes") FROM "File" WHERE "ownerId" = u.id), 0) + ${file.sizeBytes} <= p."storageQuotaBytes" AS fits
        FROM "User" u JOIN "Plan" p ON p.code = u."planCode" WHERE u.id = ${file.ownerId}::uuid AND u."deletedAt" IS NULL`;
      if (!fits?.fits) return null;
      return db.file.create({ data: file, select: FILE });
    });
  }

  findPageOfOwner(ownerId: string, limit: number, after?: Cursor) {
    return this.prisma.file.findMany({
      where: { ownerId, ...olderThan('createdAt', after) },
      orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
      take: limit + 1,
      select: FILE,
    });
  }

  findOwned(ownerId: string, id: string) {
    return this.prisma.file.findFirst({ where: { id, ownerId }, select: FILE });
  }

  findOwnedObject(ownerId: string, id: string) {
    return this.prisma.file.findFirst({
      where: { id, ownerId },
      select: {
        storageKey: true,
        originalName: true,
        mediaType: true,
        sizeBytes: true,
      },
    });
  }

  /**
   * Takes the oldest file whose text is pending and not held by another instance (or whose holder's claim
   * ran out: it crashed), holding it for `claimMs`. One statement: two instances never take the same file.
   */
  async claimPendingText(claimMs: number): Promise<PendingText | null> {
    const [row] = await this.prisma.$queryRaw<PendingText[]>`
      UPDATE "File" SET "textClaimedUntil" = now() + make_interval(secs => ${claimMs / 1000}::float8), "textAttempts" = "textAttempts" + 1
      WHERE id = (
        SELECT id FROM "File"
        WHERE "textStatus" = 'pending' AND ("textClaimedUntil" IS NULL OR "textClaimedUntil" < now())
        ORDER BY "createdAt" LIMIT 1 FOR UPDATE SKIP LOCKED
      )
      RETURNING id, "storageKey", kind::text AS kind, "sizeBytes", "textAttempts" AS attempts`;
    return row ?? null;
  }

  /** Stores the text in chunks with their full-text vectors and marks it ready; nothing when the file is gone. */
  async saveText(
    id: string,
    text: { chars: number; pages: number | null; chunks: string[] },
  ): Promise<void> {
    await this.prisma.$transaction(
      async (db) => {
        const updated = await db.$executeRaw`
        UPDATE "File" SET "textStatus" = 'ready', "textChars" = ${text.chars}, "textPages" = ${text.pages}, "textError" = NULL, "textClaimedUntil" = NULL
        WHERE id = ${id}::uuid AND "textStatus" = 'pending'`;
        if (updated === 0) return;
        // In statements of CHUNKS_PER_INSERT chunks: one parameter array of a whole large text would be huge.
        for (
          let first = 0;
          first < text.chunks.length;
          first += CHUNKS_PER_INSERT
        ) {
          const batch = text.chunks.slice(first, first + CHUNKS_PER_INSERT);
          await db.$executeRaw`
          INSERT INTO "FileChunk" ("fileId", "index", "text", "tsv")
          SELECT ${id}::uuid, (${first}::int + c.n - 1)::int, c.t, to_tsvector('simple', c.t) FROM unnest(${batch}::text[]) WITH ORDINALITY AS c(t, n)`;
        }
      },
      { timeout: SAVE_TEXT_TIMEOUT_MS },
    );
  }

  /** Gives a claimed file back (this instance is stopping): the next instance takes it at once. */
  async releaseText(id: string): Promise<void> {
    await this.prisma
      .$executeRaw`UPDATE "File" SET "textClaimedUntil" = NULL WHERE id = ${id}::uuid AND "textStatus" = 'pending'`;
  }

  async failText(id: string, code: string): Promise<void> {
    await this.prisma.$executeRaw`
      UPDATE "File" SET "textStatus" = 'failed', "textError" = ${code}, "textClaimedUntil" = NULL WHERE id = ${id}::uuid AND "textStatus" = 'pending'`;
  }

  findOwnedForContext(ownerId: string, ids: string[]) {
    return this.prisma.file.findMany({
      where: { ownerId, id: { in: ids } },
      select: {
        id: true,
        originalName: true,
        kind: true,
        textStatus: true,
        textError: true,
      },
    });
  }

  /** Every chunk of these files with its size and its rank for the query (0 without one, or no match). */
  chunkRanks(
    fileIds: string[],
    query: string | null,
  ): Promise<{ fileId: string; index: number; bytes: number; rank: number }[]> {
    return this.prisma.$queryRaw`
      SELECT "fileId"::text AS "fileId", index, octet_length(text) AS bytes,
             CASE WHEN ${query}::text IS NULL THEN 0 ELSE ts_rank(tsv, to_tsquery('simple', ${query}::text)) END::float8 AS rank
      FROM "FileChunk" WHERE "fileId" = ANY(${fileIds}::uuid[])`;
  }

  /**
   * The owner's chunks (of files whose text is ready, only `fileIds` when given) matching `query` (a
   * tsquery of the `simple` configuration), best first, with where each starts in its file's text.
   */
  searchOwnedChunks(
    ownerId: string,
    query: string,
    fileIds: string[] | null,
    limit: number,
  ): Promise<
    {
      fileId: string;
      fileName: string;
      index: number;
      charOffset: number;
      text: string;
    }[]
  > {
    return this.prisma.$queryRaw`
      SELECT c."fileId"::text AS "fileId", f."originalName" AS "fileName", c.index,
             (SELECT COALESCE(SUM(length(p.text)), 0) FROM "FileChunk" p
               WHERE p."fileId" = c."fileId" AND p.index < c.index)::int AS "charOffset",
             c.text
        FROM "FileChunk" c
        JOIN "File" f ON f.id = c."fileId"
        CROSS JOIN to_tsquery('simple', ${query}::text) AS q(query)
       WHERE f."ownerId" = ${ownerId}::uuid AND f."textStatus" = 'ready'
         AND (${fileIds}::uuid[] IS NULL OR f.id = ANY(${fileIds}::uuid[]))
         AND c.tsv @@ q.query
       ORDER BY ts_rank(c.tsv, q.query) DESC, f."createdAt" DESC, c.index
       LIMIT ${limit}`;
  }

  /** The text of the chosen chunks, in document order per file. */
  chunkTexts(
    fileIds: string[],
    indexes: number[],
  ): Promise<{ fileId: string; index: number; text: string }[]> {
    return this.prisma.$queryRaw`
      SELECT c."fileId"::text AS "fileId", c.index, c.text
      FROM "FileChunk" c JOIN unnest(${fileIds}::uuid[], ${indexes}::int[]) AS k(f, i) ON c."fileId" = k.f AND c.index = k.i
      ORDER BY c."fileId", c.index`;
  }

  findOwnedStorageKey(ownerId: string, id: string) {
    return this.prisma.file.findFirst({
      where: { id, ownerId },
      select: { id: true, storageKey: true },
    });
  }

  async deleteOwned(ownerId: string, id: string): Promise<void> {
    await this.prisma.file.deleteMany({ where: { id, ownerId } });
  }
}

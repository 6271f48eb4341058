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

const FILE = { id: true, originalName: true, kind: true, mediaType: true, sizeBytes: true, sha256: true, createdAt: true } as const;

@Injectable()
export class FilesRepository {
  constructor(private readonly prisma: PrismaService) {}

  /**
   * Records the file only if it fits the owner's storage quota. The owner's row is locked first, so two
   * uploads finishing together are checked one after the other. Null when it does not fit.
   */
  async insertWithinQuota(file: NewFile) {
    return this.prisma.$transaction(async (db) => {
      await db.$queryRaw`SELECT 1 FROM "User" WHERE id = ${file.ownerId}::uuid FOR UPDATE`;
      const [fits] = await db.$queryRaw<{ fits: boolean }[]>`
        SELECT COALESCE((SELECT SUM("sizeBytes") FROM "File" WHERE "ownerId" = u.id), 0) + ${file.sizeBytes} <= p."storageQuotaBytes" AS fits
        FROM "User" u JOIN "Plan" p ON p.code = u."planCode" WHERE u.id = ${file.ownerId}::uuid`;
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

  findOwnedStorageKey(ownerId: string, id: string) {
    return this.prisma.file.findFirst({ where: { id, ownerId }, select: { id: true, storageKey: true } });
  }

  async deleteOwned(ownerId: string, id: string): Promise<void> {
    await this.prisma.file.deleteMany({ where: { id, ownerId } });
  }
}

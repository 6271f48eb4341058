import { Injectable } from '@nestjs/common';
import { Cursor, olderThan } from '../common/pagination';
import { Prisma } from '../infra/prisma/generated/client';
import { PrismaService } from '../infra/prisma/prisma.service';

/**
 * Whose Skills: the user's personal ones (no organization), or an organization's (docs/adr/0062-organizations.md).
 * `userId` is the author of what is created.
 */
export interface SkillOwner {
  userId: string;
  organizationId: string | null;
}

function ownedBy(owner: SkillOwner) {
  return owner.organizationId
    ? { organizationId: owner.organizationId }
    : { ownerId: owner.userId, organizationId: null };
}

/** A JSON Schema as stored: absent schemas are SQL NULL. */
export type StoredSchema = Prisma.InputJsonValue | null;

export interface VersionContent {
  instruction: string;
  inputSchema: StoredSchema;
  outputSchema: StoredSchema;
}

const VERSION = {
  id: true,
  number: true,
  instruction: true,
  inputSchema: true,
  outputSchema: true,
  createdAt: true,
} as const;
const SKILL = {
  id: true,
  ownerId: true,
  organizationId: true,
  allowedTools: true,
  name: true,
  latestVersion: true,
  createdAt: true,
  updatedAt: true,
} as const;

/** A schema from a parsed JSON body or file (so JSON by construction); absent and null are both "none". */
export function asStoredSchema(value: unknown): StoredSchema {
  return value === undefined || value === null ? null : value;
}

export function jsonColumn(
  value: StoredSchema,
): Prisma.InputJsonValue | typeof Prisma.DbNull {
  return value === null ? Prisma.DbNull : value;
}

@Injectable()
export class SkillsRepository {
  constructor(private readonly prisma: PrismaService) {}

  /** A new Skill with its first version numbered `number` (1, or the imported number). Never any tools. */
  createWithFirstVersion(
    owner: SkillOwner,
    name: string,
    number: number,
    content: VersionContent,
  ) {
    return this.prisma.skill.create({
      data: {
        ownerId: owner.userId,
        organizationId: owner.organizationId,
        name,
        latestVersion: number,
        versions: {
          create: {
            number,
            instruction: content.instruction,
            inputSchema: jsonColumn(content.inputSchema),
            outputSchema: jsonColumn(content.outputSchema),
          },
        },
      },
      select: { ...SKILL, versions: { select: VERSION } },
    });
  }

  /**
   * Publishes version n+1 of an owned Skill: the increment of `latestVersion` locks the Skill row, so
   * concurrent publishes take distinct consecutive numbers. The new version, or null when the Skill is not
   * the owner's.
   */
  publishVersion(owner: SkillOwner, skillId: string, content: VersionContent) {
    const owned = owner.organizationId
      ? Prisma.sql`"organizationId" = ${owner.organizationId}::uuid`
      : Prisma.sql`"ownerId" = ${owner.userId}::uuid AND "organizationId" IS NULL`;
    return this.prisma.$transaction(async (db) => {
      const [bumped] = await db.$queryRaw<{ latestVersion: number }[]>`
        UPDATE "Skill" SET "latestVersion" = "latestVersion" + 1, "updatedAt" = now()
        WHERE id = ${skillId}::uuid AND ${owned}
        RETURNING "latestVersion"`;
      if (!bumped) return null;
      return db.skillVersion.create({
        data: {
          skillId,
          number: bumped.latestVersion,
          instruction: content.instruction,
          inputSchema: jsonColumn(content.inputSchema),
          outputSchema: jsonColumn(content.outputSchema),
        },
        select: VERSION,
      });
    });
  }

  findPageOfOwner(owner: SkillOwner, limit: number, after?: Cursor) {
    return this.prisma.skill.findMany({
      where: { ...ownedBy(owner), ...olderThan('createdAt', after) },
      orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
      take: limit + 1,
      select: SKILL,
    });
  }

  findOwnedWithVersions(owner: SkillOwner, id: string) {
    return this.prisma.skill.findFirst({
      where: { id, ...ownedBy(owner) },
      select: {
        ...SKILL,
        versions: { orderBy: { number: 'asc' }, select: VERSION },
      },
    });
  }

  async isOwned(owner: SkillOwner, id: string): Promise<boolean> {
    return (
      (await this.prisma.skill.count({ where: { id, ...ownedBy(owner) } })) > 0
    );
  }

  /** Deletes an owned Skill (its versions go with it; conversations keep their messages). */
  async delete(owner: SkillOwner, id: string): Promise<boolean> {
    const { count } = await this.prisma.skill.deleteMany({
      where: { id, ...ownedBy(owner) },
    });
    return count > 0;
  }

  /** Sets an owned Skill's tool binding; false when the caller owns no such Skill. */
  async setAllowedTools(
    owner: SkillOwner,
    id: string,
    allowedTools: string[],
  ): Promise<boolean> {
    const { count } = await this.prisma.skill.updateMany({
      where: { id, ...ownedBy(owner) },
      data: { allowedTools },
    });
    return count > 0;
  }

  /** An owned Skill with only its latest version. */
  findOwnedWithLatestVersion(owner: SkillOwner, id: string) {
    return this.prisma.skill.findFirst({
      where: { id, ...ownedBy(owner) },
      select: {
        ...SKILL,
        versions: { orderBy: { number: 'desc' }, take: 1, select: VERSION },
      },
    });
  }
}

import { Injectable } from '@nestjs/common';
import { Db, PrismaService } from '../../infra/prisma/prisma.service';
import { asStoredSchema, jsonColumn } from '../skills.repository';
import { SkillTemplateSeed } from './skill-templates-file';

const TEMPLATE = {
  id: true,
  name: true,
  description: true,
  instruction: true,
  inputSchema: true,
  outputSchema: true,
} as const;
const ADMIN_TEMPLATE = {
  ...TEMPLATE,
  sortOrder: true,
  retiredAt: true,
  createdAt: true,
  updatedAt: true,
} as const;

/** What an admin writes; undefined fields are left as they are, null schemas removed. */
export interface TemplateContent {
  name?: string;
  description?: string;
  instruction?: string;
  inputSchema?: unknown;
  outputSchema?: unknown;
}

@Injectable()
export class SkillTemplatesRepository {
  constructor(private readonly prisma: PrismaService) {}

  /** Adds the templates that do not exist yet; existing ones (maybe edited or retired by an admin) are left alone. */
  async insertMissing(seeds: SkillTemplateSeed[]): Promise<number> {
    const result = await this.prisma.skillTemplate.createMany({
      data: seeds.map((seed, index) => ({
        id: seed.id,
        name: seed.name,
        description: seed.description,
        instruction: seed.instruction,
        inputSchema: jsonColumn(asStoredSchema(seed.input_schema)),
        outputSchema: jsonColumn(asStoredSchema(seed.output_schema)),
        sortOrder: index,
      })),
      skipDuplicates: true,
    });
    return result.count;
  }

  findActive() {
    return this.prisma.skillTemplate.findMany({
      where: { retiredAt: null },
      orderBy: [{ sortOrder: 'asc' }, { id: 'asc' }],
      select: TEMPLATE,
    });
  }

  findActiveById(id: string) {
    return this.prisma.skillTemplate.findFirst({
      where: { id, retiredAt: null },
      select: TEMPLATE,
    });
  }

  // --- admin ------------------------------------------------------------------------------------------------

  findAllForAdmin() {
    return this.prisma.skillTemplate.findMany({
      orderBy: [{ sortOrder: 'asc' }, { id: 'asc' }],
      select: ADMIN_TEMPLATE,
    });
  }

  async lockForAdmin(db: Db, id: string) {
    const [row] = await db.$queryRaw<
      { id: string }[]
    >`SELECT id FROM "SkillTemplate" WHERE id = ${id} FOR UPDATE`;
    return row
      ? db.skillTemplate.findUnique({ where: { id }, select: ADMIN_TEMPLATE })
      : null;
  }

  /** Inserts unless the id is taken (null then), last in the list. */
  async insertForAdmin(
    db: Db,
    id: string,
    content: Required<
      Pick<TemplateContent, 'name' | 'description' | 'instruction'>
    > &
      TemplateContent,
  ) {
    const created = await db.skillTemplate.createMany({
      data: [
        {
          id,
          name: content.name,
          description: content.description,
          instruction: content.instruction,
          inputSchema: jsonColumn(asStoredSchema(content.inputSchema)),
          outputSchema: jsonColumn(asStoredSchema(content.outputSchema)),
          sortOrder: 1_000_000,
        },
      ],
      skipDuplicates: true,
    });
    return created.count === 1
      ? db.skillTemplate.findUnique({ where: { id }, select: ADMIN_TEMPLATE })
      : null;
  }

  updateForAdmin(db: Db, id: string, content: TemplateContent) {
    return db.skillTemplate.update({
      where: { id },
      data: {
        name: content.name,
        description: content.description,
        instruction: content.instruction,
        ...(content.inputSchema !== undefined
          ? { inputSchema: jsonColumn(asStoredSchema(content.inputSchema)) }
          : {}),
        ...(content.outputSchema !== undefined
          ? { outputSchema: jsonColumn(asStoredSchema(content.outputSchema)) }
          : {}),
      },
      select: ADMIN_TEMPLATE,
    });
  }

  setRetired(db: Db, id: string, retiredAt: Date | null) {
    return db.skillTemplate.update({
      where: { id },
      data: { retiredAt },
      select: ADMIN_TEMPLATE,
    });
  }
}

export type AdminTemplateRow = NonNullable<
  Awaited<ReturnType<SkillTemplatesRepository['lockForAdmin']>>
>;

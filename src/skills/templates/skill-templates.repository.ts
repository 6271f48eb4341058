import { Injectable } from '@nestjs/common';
import { PrismaService } from '../../infra/prisma/prisma.service';
import { asStoredSchema, jsonColumn } from '../skills.repository';
import { SkillTemplateSeed } from './skill-templates-file';

const TEMPLATE = { id: true, name: true, description: true, instruction: true, inputSchema: true, outputSchema: true } as const;

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
    return this.prisma.skillTemplate.findMany({ where: { retiredAt: null }, orderBy: [{ sortOrder: 'asc' }, { id: 'asc' }], select: TEMPLATE });
  }

  findActiveById(id: string) {
    return this.prisma.skillTemplate.findFirst({ where: { id, retiredAt: null }, select: TEMPLATE });
  }
}

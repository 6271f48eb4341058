import { Injectable } from '@nestjs/common';
import { SessionUser } from '../auth/session-user';
import { Clock } from '../common/clock';
import { AppError } from '../common/errors/app-error';
import { Prisma } from '../infra/prisma/generated/client';
import { Db } from '../infra/prisma/prisma.service';
import { JsonSchemaService } from '../skills/json-schema.service';
import {
  AdminTemplateRow,
  SkillTemplatesRepository,
} from '../skills/templates/skill-templates.repository';
import { AdminActionsGate } from './admin-actions.gate';
import { AdminCatalogRepository } from './admin-catalog.repository';
import { AuditRepository } from '../audit/audit.repository';
import { AdminModelListDto, AdminPlanListDto } from './dto/admin-catalog.dto';
import {
  AdminTemplateDto,
  AdminTemplateListDto,
  CreateTemplateDto,
  TEMPLATE_ID,
  UpdateTemplateDto,
} from './dto/admin-template.dto';

/** The catalog as synced (plans and models, inactive ones included) and the Skill templates admins manage. */
@Injectable()
export class AdminCatalogService {
  constructor(
    private readonly catalog: AdminCatalogRepository,
    private readonly templates: SkillTemplatesRepository,
    private readonly jsonSchema: JsonSchemaService,
    private readonly audit: AuditRepository,
    private readonly clock: Clock,
    private readonly gate: AdminActionsGate,
  ) {}

  async plans(): Promise<AdminPlanListDto> {
    const rows = await this.catalog.findAllPlans();
    return {
      data: rows.map((plan) => ({
        code: plan.code,
        name: plan.name,
        price: {
          amount: plan.priceAmount,
          currency: plan.priceCurrency,
          interval: plan.priceInterval,
        },
        dailyCredits: plan.dailyCredits,
        storageQuotaBytes: Number(plan.storageQuotaBytes),
        checkoutAllowed: plan.checkoutAllowed,
        active: plan.active,
        models: plan.models.map((link) => link.modelId),
        users: plan._count.users,
      })),
    };
  }

  async models(): Promise<AdminModelListDto> {
    const rows = await this.catalog.findAllModels();
    return {
      data: rows.map((model) => ({
        id: model.id,
        name: model.name,
        provider: model.provider,
        upstreamModel: model.upstreamModel,
        price: {
          perRequest: model.creditsPerRequest,
          per1kInputTokens: model.creditsPer1kInput,
          per1kOutputTokens: model.creditsPer1kOutput,
        },
        maxOutputTokens: model.maxOutputTokens,
        contextWindowTokens: model.contextWindowTokens,
        active: model.active,
      })),
    };
  }

  async listTemplates(): Promise<AdminTemplateListDto> {
    return { data: (await this.templates.findAllForAdmin()).map(toTemplate) };
  }

  async createTemplate(
    admin: SessionUser,
    input: CreateTemplateDto,
  ): Promise<AdminTemplateDto> {
    await this.jsonSchema.assertValidSchemas(input);
    const created = await this.catalog.inTransaction(async (db) => {
      await this.gate.enter(db, admin);
      const row = await this.templates.insertForAdmin(db, input.id, {
        name: input.name,
        description: input.description,
        instruction: input.instruction,
        inputSchema: input.input_schema,
        outputSchema: input.output_schema,
      });
      if (!row)
        throw new AppError(
          'conflict',
          `A template with the id '${input.id}' exists already (retired ones too).`,
        );
      await this.record(
        db,
        admin,
        'template.create',
        row.id,
        null,
        row,
        input.reason,
      );
      return row;
    });
    return toTemplate(created);
  }

  async updateTemplate(
    admin: SessionUser,
    id: string,
    input: UpdateTemplateDto,
  ): Promise<AdminTemplateDto> {
    await this.jsonSchema.assertValidSchemas(input);
    return toTemplate(
      await this.change(admin, id, 'template.update', input.reason, (db) =>
        this.templates.updateForAdmin(db, id, {
          name: input.name,
          description: input.description,
          instruction: input.instruction,
          inputSchema: input.input_schema,
          outputSchema: input.output_schema,
        }),
      ),
    );
  }

  async retireTemplate(
    admin: SessionUser,
    id: string,
    reason: string | undefined,
    retired: boolean,
  ): Promise<AdminTemplateDto> {
    const action = retired ? 'template.retire' : 'template.restore';
    return toTemplate(
      await this.change(admin, id, action, reason, (db) =>
        this.templates.setRetired(db, id, retired ? this.clock.now() : null),
      ),
    );
  }

  private async change(
    admin: SessionUser,
    id: string,
    action: string,
    reason: string | undefined,
    work: (db: Db) => Promise<AdminTemplateRow>,
  ): Promise<AdminTemplateRow> {
    if (!TEMPLATE_ID.test(id)) throw templateNotFound();
    return this.catalog.inTransaction(async (db) => {
      await this.gate.enter(db, admin);
      const before = await this.templates.lockForAdmin(db, id);
      if (!before) throw templateNotFound();
      const after = await work(db);
      await this.record(db, admin, action, id, before, after, reason);
      return after;
    });
  }

  private record(
    db: Db,
    admin: SessionUser,
    action: string,
    id: string,
    before: AdminTemplateRow | null,
    after: AdminTemplateRow,
    reason?: string,
  ): Promise<void> {
    return this.audit.record(db, {
      adminId: admin.id,
      action,
      targetType: 'skill_template',
      targetId: id,
      before: before ? auditable(before) : undefined,
      after: auditable(after),
      reason: reason ?? null,
    });
  }
}

function toTemplate(row: AdminTemplateRow): AdminTemplateDto {
  return {
    id: row.id,
    name: row.name,
    description: row.description,
    instruction: row.instruction,
    input_schema: row.inputSchema,
    output_schema: row.outputSchema,
    retiredAt: row.retiredAt?.toISOString() ?? null,
    updatedAt: row.updatedAt.toISOString(),
  };
}

function auditable(row: AdminTemplateRow): Prisma.InputJsonValue {
  return JSON.parse(JSON.stringify(toTemplate(row))) as Prisma.InputJsonValue;
}

function templateNotFound(): AppError {
  return new AppError('not_found', 'There is no such Skill template.');
}

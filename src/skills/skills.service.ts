import { ToolsService } from '../tools/tools.service';
import { SkillToolsDto } from './dto/skill-tools.dto';
import { Injectable } from '@nestjs/common';
import { SessionUser } from '../auth/session-user';
import { ChatPipelineService } from '../chat/chat-pipeline.service';
import { RunRequest } from '../chat/admission/chat-admission';
import { payingCaller, TurnCompletion } from '../chat/run/chat-turn';
import { ChatStream } from '../chat/chat-stream';
import { fingerprintOf } from '../chat/fingerprint';
import { AppError } from '../common/errors/app-error';
import { isUuid } from '../common/ids';
import {
  decodeCursor,
  DEFAULT_PAGE_SIZE,
  PageQueryDto,
  toPage,
} from '../common/pagination';
import { AppValidationPipe } from '../common/validation/validation.pipe';
import {
  CreateSkillDto,
  ImportSkillDto,
  PORTABLE_FIELDS,
  PublishVersionDto,
  SkillVersionInputDto,
} from './dto/skill-input.dto';
import {
  SkillDto,
  SkillExportDto,
  SkillPageDto,
  SkillSummaryDto,
  SkillTemplateDto,
  SkillTemplateListDto,
  SkillVersionDto,
} from './dto/skill.response';
import { SkillRunDto } from './dto/skill-run.dto';
import { JsonSchemaService } from './json-schema.service';
import {
  asStoredSchema,
  SkillOwner,
  SkillsRepository,
  VersionContent,
} from './skills.repository';
import { OrgAccess } from '../orgs/org-access';
import { OrgRoleName } from '../orgs/dto/org-input.dto';
import { SkillTemplatesRepository } from './templates/skill-templates.repository';

/** Template ids are slugs; anything else is answered like an unknown template. */
const TEMPLATE_ID = /^[a-z0-9][a-z0-9-]{0,62}$/;

type SkillRow = {
  id: string;
  ownerId: string;
  organizationId: string | null;
  allowedTools: string[];
  name: string;
  latestVersion: number;
  createdAt: Date;
  updatedAt: Date;
};
type VersionRow = {
  id: string;
  number: number;
  instruction: string;
  inputSchema: unknown;
  outputSchema: unknown;
  createdAt: Date;
};

@Injectable()
export class SkillsService {
  constructor(
    private readonly skills: SkillsRepository,
    private readonly templates: SkillTemplatesRepository,
    private readonly pipeline: ChatPipelineService,
    private readonly jsonSchema: JsonSchemaService,
    private readonly tools: ToolsService,
    private readonly orgs: OrgAccess,
  ) {}

  /**
   * Every method works on the caller's personal Skills, or, given `orgId`, on that organization's
   * (docs/adr/0062-organizations.md): members list, read and run them, admins and owners write them.
   */
  async create(
    user: SessionUser,
    input: CreateSkillDto,
    orgId?: string,
  ): Promise<SkillDto> {
    const owner = await this.ownerFor(user, orgId, 'admin');
    return toSkill(
      await this.skills.createWithFirstVersion(
        owner,
        input.name,
        1,
        await this.checkedContent(input),
      ),
    );
  }

  async list(
    user: SessionUser,
    query: PageQueryDto,
    orgId?: string,
  ): Promise<SkillPageDto> {
    const owner = await this.ownerFor(user, orgId, 'member');
    const limit = query.limit ?? DEFAULT_PAGE_SIZE;
    const rows = await this.skills.findPageOfOwner(
      owner,
      limit,
      query.cursor ? decodeCursor(query.cursor) : undefined,
    );
    return toPage(
      rows,
      limit,
      (row) => ({ at: row.createdAt, id: row.id }),
      toSummary,
    );
  }

  async get(user: SessionUser, id: string, orgId?: string): Promise<SkillDto> {
    const owner = await this.ownerFor(user, orgId, 'member');
    const skill = isUuid(id)
      ? await this.skills.findOwnedWithVersions(owner, id)
      : null;
    if (!skill) throw notFound();
    return toSkill(skill);
  }

  /**
   * Sets the tools the Skill's runs offer the model: ids the caller may use now (400 naming any other),
   * on a Skill of theirs (404 otherwise). Answers the Skill.
   */
  async setTools(
    user: SessionUser,
    id: string,
    input: SkillToolsDto,
    orgId?: string,
  ): Promise<SkillDto> {
    const owner = await this.ownerFor(user, orgId, 'admin');
    if (!isUuid(id) || !(await this.skills.isOwned(owner, id)))
      throw notFound();
    // An organization's Skill offers the tools of the organization's plan.
    await this.tools.usableOrRefuse(
      payingCaller(user, owner),
      input.allowed_tools,
      'allowed_tools',
    );
    if (!(await this.skills.setAllowedTools(owner, id, input.allowed_tools)))
      throw notFound();
    return this.get(user, id, orgId);
  }

  /** Deletes a Skill with its versions; conversations that ran it keep their messages. */
  async delete(user: SessionUser, id: string, orgId?: string): Promise<void> {
    const owner = await this.ownerFor(user, orgId, 'admin');
    if (!isUuid(id) || !(await this.skills.delete(owner, id))) throw notFound();
  }

  async publish(
    user: SessionUser,
    id: string,
    input: PublishVersionDto,
    orgId?: string,
  ): Promise<SkillVersionDto> {
    const owner = await this.ownerFor(user, orgId, 'admin');
    const content = await this.checkedContent(input);
    const version = isUuid(id)
      ? await this.skills.publishVersion(owner, id, content)
      : null;
    if (!version) throw notFound();
    return toVersion(version);
  }

  async export(
    user: SessionUser,
    id: string,
    orgId?: string,
  ): Promise<SkillExportDto> {
    const owner = await this.ownerFor(user, orgId, 'member');
    const { skill, latest } = await this.latestOf(owner, id);
    return {
      name: skill.name,
      instruction: latest.instruction,
      input_schema: latest.inputSchema,
      output_schema: latest.outputSchema,
      version: latest.number,
    };
  }

  /** Accepts exactly the export shape: any other field is refused, named, before anything else is checked. */
  async import(
    user: SessionUser,
    body: unknown,
    orgId?: string,
  ): Promise<SkillDto> {
    const owner = await this.ownerFor(user, orgId, 'admin');
    if (typeof body !== 'object' || body === null || Array.isArray(body)) {
      throw new AppError(
        'validation_failed',
        'The body must be a JSON object.',
        {
          errors: [
            {
              field: 'body',
              code: 'invalid_body',
              message: 'the body must be a JSON object',
            },
          ],
        },
      );
    }
    const forbidden = Object.keys(body).filter(
      (field) => !(PORTABLE_FIELDS as readonly string[]).includes(field),
    );
    if (forbidden.length > 0) {
      throw new AppError(
        'forbidden_field',
        `Not accepted on import: ${forbidden.join(', ')}. An import carries exactly ${PORTABLE_FIELDS.join(', ')}.`,
        {
          errors: forbidden.map((field) => ({
            field,
            code: 'forbidden_field',
            message: `${field} is not accepted on import`,
          })),
        },
      );
    }
    const input = (await new AppValidationPipe().transform(body, {
      type: 'body',
      metatype: ImportSkillDto,
    })) as ImportSkillDto;
    return toSkill(
      await this.skills.createWithFirstVersion(
        owner,
        input.name,
        input.version ?? 1,
        await this.checkedContent(input),
      ),
    );
  }

  async listTemplates(): Promise<SkillTemplateListDto> {
    const rows = await this.templates.findActive();
    return { data: rows.map(toTemplate) };
  }

  async duplicateTemplate(
    user: SessionUser,
    templateId: string,
  ): Promise<SkillDto> {
    const template = TEMPLATE_ID.test(templateId)
      ? await this.templates.findActiveById(templateId)
      : null;
    if (!template) throw new AppError('not_found', 'No such Skill template.');
    return toSkill(
      await this.skills.createWithFirstVersion(
        personal(user),
        template.name,
        1,
        {
          instruction: template.instruction,
          inputSchema: asStoredSchema(template.inputSchema),
          outputSchema: asStoredSchema(template.outputSchema),
        },
      ),
    );
  }

  /**
   * Runs the latest version through the chat pipeline: its instruction is the system message and `input`
   * the single user message. An input refused by the version's input_schema is a 422 before anything is
   * claimed or billed.
   */
  async run(
    user: SessionUser,
    id: string,
    request: SkillRunDto,
    runRequest: RunRequest = {},
    orgId?: string,
  ): Promise<ChatStream> {
    if (orgId && request.organizationId && request.organizationId !== orgId)
      throw new AppError(
        'validation_failed',
        "An organization's Skill runs on its own pool: organizationId must be absent or this organization.",
        {
          errors: [
            {
              field: 'organizationId',
              code: 'organization_mismatch',
              message:
                "organizationId must be absent or the Skill's organization",
            },
          ],
        },
      );
    const payerId = orgId ?? request.organizationId;
    const content =
      typeof request.input === 'string'
        ? request.input
        : JSON.stringify(request.input);
    return this.pipeline.start(
      user,
      {
        model: request.model,
        idempotencyKey: request.idempotencyKey,
        fingerprint: fingerprintOf({
          kind: 'skill',
          // As stored (ids are matched lower-case).
          skillId: id.toLowerCase(),
          model: request.model,
          conversationId: request.conversationId ?? null,
          input: request.input,
          fileIds: request.fileIds,
          organizationId: payerId,
        }),
        conversationId: request.conversationId,
        fileIds: request.fileIds,
        messages: [{ role: 'user', content }],
        // The Skill is read once the key is known to be new: a retry replays its answer even after the
        // Skill was deleted or its author left the organization.
        prepareNewRequest: () => this.newRun(user, id, request, payerId, orgId),
      },
      runRequest,
    );
  }

  /**
   * What a new run of the Skill needs: its latest version (the instruction, sent first), the payer, the
   * input checked against the version's schema, and the Skill's tools the caller may still use (a plan
   * change may have closed some).
   */
  private async newRun(
    user: SessionUser,
    id: string,
    request: SkillRunDto,
    payerId: string | undefined,
    orgId: string | undefined,
  ): Promise<TurnCompletion> {
    const owner = await this.ownerFor(user, orgId, 'member');
    const { skill, latest } = await this.latestOf(owner, id);
    const payer = payerId ? await this.orgs.payer(user, payerId) : undefined;
    await this.checkInput(latest, request.input);
    return {
      system: latest.instruction,
      skill: { skillId: skill.id, skillVersionId: latest.id },
      tools: await this.tools.stillUsable(
        payingCaller(user, payer),
        skill.allowedTools,
      ),
      payer,
    };
  }

  /** 422 when the input does not match the version's input_schema (checked with a time budget). */
  private async checkInput(version: VersionRow, input: unknown): Promise<void> {
    if (version.inputSchema === null) return;
    const problems = await this.jsonSchema.valueProblems(
      'input',
      version.inputSchema,
      input,
      version.id,
    );
    if (problems.length > 0) {
      throw new AppError(
        'input_invalid',
        `input does not match the input_schema of version ${version.number}: ${problems.map((problem) => problem.message).join('; ')}.`,
        { errors: problems },
      );
    }
  }

  /** The version content with its schemas checked as draft 2020-12 JSON Schemas (400 naming each problem). */
  private async checkedContent(
    input: SkillVersionInputDto,
  ): Promise<VersionContent> {
    await this.jsonSchema.assertValidSchemas(input);
    return {
      instruction: input.instruction,
      inputSchema: asStoredSchema(input.input_schema),
      outputSchema: asStoredSchema(input.output_schema),
    };
  }

  /** The caller's personal Skills, or the organization's when the caller's role there allows `need`. */
  private async ownerFor(
    user: SessionUser,
    orgId: string | undefined,
    need: OrgRoleName,
  ): Promise<SkillOwner & { planCode: string }> {
    if (orgId === undefined)
      return { ...personal(user), planCode: user.planCode };
    const { organization } = await this.orgs.require(user, orgId, need);
    return {
      userId: user.id,
      organizationId: orgId,
      planCode: organization.planCode,
    };
  }

  private async latestOf(
    owner: SkillOwner,
    id: string,
  ): Promise<{ skill: SkillRow; latest: VersionRow }> {
    const skill = isUuid(id)
      ? await this.skills.findOwnedWithLatestVersion(owner, id)
      : null;
    const latest = skill?.versions[0];
    if (!skill || !latest) throw notFound();
    return { skill, latest };
  }
}

function personal(user: SessionUser): SkillOwner {
  return { userId: user.id, organizationId: null };
}

function notFound(): AppError {
  return new AppError('not_found', 'No such Skill.');
}

function toSummary(row: SkillRow): SkillSummaryDto {
  return {
    id: row.id,
    name: row.name,
    version: row.latestVersion,
    created_at: row.createdAt.toISOString(),
    updated_at: row.updatedAt.toISOString(),
  };
}

function toSkill(row: SkillRow & { versions: VersionRow[] }): SkillDto {
  return {
    ...toSummary(row),
    owner_id: row.ownerId,
    organization_id: row.organizationId,
    allowed_tools: row.allowedTools,
    versions: row.versions.map(toVersion),
  };
}

function toVersion(row: VersionRow): SkillVersionDto {
  return {
    version: row.number,
    instruction: row.instruction,
    input_schema: row.inputSchema,
    output_schema: row.outputSchema,
    created_at: row.createdAt.toISOString(),
  };
}

function toTemplate(row: {
  id: string;
  name: string;
  description: string;
  instruction: string;
  inputSchema: unknown;
  outputSchema: unknown;
}): SkillTemplateDto {
  return {
    id: row.id,
    name: row.name,
    description: row.description,
    instruction: row.instruction,
    input_schema: row.inputSchema,
    output_schema: row.outputSchema,
  };
}

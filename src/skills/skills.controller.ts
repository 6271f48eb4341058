import { SkillToolsDto } from './dto/skill-tools.dto';
import {
  Body,
  Controller,
  Get,
  HttpCode,
  Param,
  Post,
  Put,
  Query,
  Req,
  Res,
} from '@nestjs/common';
import { VerifiedEmailRequired } from '../auth/verified-email.guard';
import {
  ApiBody,
  ApiCreatedResponse,
  ApiOkResponse,
  ApiOperation,
  ApiProduces,
  ApiTags,
} from '@nestjs/swagger';
import { Request, Response } from 'express';
import { CurrentUser } from '../auth/current-user.decorator';
import { SessionUser } from '../auth/session-user';
import { ChatAdmission } from '../chat/admission/chat-admission';
import { STREAMED_ANSWER_RESPONSE } from '../chat/chat.controller';
import {
  abortWhenClientLeaves,
  writeAnswer,
} from '../chat/chat-response.writer';
import { ApiProblems } from '../common/openapi/api-problems.decorator';
import { PageQueryDto } from '../common/pagination';
import {
  CreateSkillDto,
  ImportSkillDto,
  PublishVersionDto,
} from './dto/skill-input.dto';
import {
  SkillDto,
  SkillExportDto,
  SkillPageDto,
  SkillTemplateListDto,
  SkillVersionDto,
} from './dto/skill.response';
import { SkillRunDto } from './dto/skill-run.dto';
import { RateLimit } from '../common/rate-limit/rate-limit.decorator';
import { SkillsService } from './skills.service';

@ApiTags('skills')
@Controller('skills')
export class SkillsController {
  constructor(
    private readonly skills: SkillsService,
    private readonly admission: ChatAdmission,
  ) {}

  @RateLimit('skill-write-user')
  @Post()
  @ApiOperation({ summary: 'Create a private Skill with its version 1' })
  @ApiCreatedResponse({ type: SkillDto })
  @ApiProblems(401)
  create(
    @CurrentUser() user: SessionUser,
    @Body() body: CreateSkillDto,
  ): Promise<SkillDto> {
    return this.skills.create(user, body);
  }

  @Get()
  @ApiOperation({
    summary: "The caller's Skills, newest first (cursor pagination)",
  })
  @ApiOkResponse({ type: SkillPageDto })
  @ApiProblems(401)
  list(
    @CurrentUser() user: SessionUser,
    @Query() query: PageQueryDto,
  ): Promise<SkillPageDto> {
    return this.skills.list(user, query);
  }

  // Declared before `:id` so that `templates` is not taken for an id.
  @Get('templates')
  @ApiOperation({
    summary: 'The starter templates that can be duplicated into a Skill',
  })
  @ApiOkResponse({ type: SkillTemplateListDto })
  @ApiProblems(401)
  templates(): Promise<SkillTemplateListDto> {
    return this.skills.listTemplates();
  }

  @RateLimit('skill-write-user')
  @Post('templates/:id/duplicate')
  @ApiOperation({
    summary: 'Copy a template into a new Skill of the caller (version 1)',
  })
  @ApiCreatedResponse({ type: SkillDto })
  @ApiProblems(401, 404)
  duplicate(
    @CurrentUser() user: SessionUser,
    @Param('id') id: string,
  ): Promise<SkillDto> {
    return this.skills.duplicateTemplate(user, id);
  }

  /** The body is checked by the service: a forbidden field must be answered as such, not as an unknown one. */
  @RateLimit('skill-write-user')
  @Post('import')
  @ApiOperation({
    summary:
      'Create a Skill from the portable export shape, keeping its version number',
  })
  @ApiBody({ type: ImportSkillDto })
  @ApiCreatedResponse({ type: SkillDto })
  @ApiProblems(401)
  import(
    @CurrentUser() user: SessionUser,
    @Body() body: unknown,
  ): Promise<SkillDto> {
    return this.skills.import(user, body);
  }

  @Get(':id')
  @ApiOperation({ summary: 'One of the caller’s Skills with all its versions' })
  @ApiOkResponse({ type: SkillDto })
  @ApiProblems(401, 404)
  get(
    @CurrentUser() user: SessionUser,
    @Param('id') id: string,
  ): Promise<SkillDto> {
    return this.skills.get(user, id);
  }

  @Get(':id/export')
  @ApiOperation({
    summary:
      'The latest version in the portable shape { name, instruction, input_schema, output_schema, version }',
  })
  @ApiOkResponse({ type: SkillExportDto })
  @ApiProblems(401, 404)
  export(
    @CurrentUser() user: SessionUser,
    @Param('id') id: string,
  ): Promise<SkillExportDto> {
    return this.skills.export(user, id);
  }

  @RateLimit('skill-write-user')
  @Put(':id/tools')
  @ApiOperation({
    summary:
      'Set the tools the Skill’s runs offer the model (allowed_tools: ids from GET /v1/tools; empty for none)',
  })
  @ApiOkResponse({ type: SkillDto })
  @ApiProblems(400, 401, 404)
  setTools(
    @CurrentUser() user: SessionUser,
    @Param('id') id: string,
    @Body() body: SkillToolsDto,
  ): Promise<SkillDto> {
    return this.skills.setTools(user, id, body);
  }

  @RateLimit('skill-write-user')
  @Post(':id/versions')
  @ApiOperation({ summary: 'Publish a new immutable version (n + 1)' })
  @ApiCreatedResponse({ type: SkillVersionDto })
  @ApiProblems(401, 404)
  publish(
    @CurrentUser() user: SessionUser,
    @Param('id') id: string,
    @Body() body: PublishVersionDto,
  ): Promise<SkillVersionDto> {
    return this.skills.publish(user, id, body);
  }

  @VerifiedEmailRequired()
  @RateLimit('run-user')
  @Post(':id/run')
  @HttpCode(200)
  @ApiOperation({
    summary:
      'Run the latest version through the chat pipeline and stream the answer (idempotent, quota-limited, billed once)',
  })
  @ApiProduces('text/plain', 'text/event-stream')
  @ApiOkResponse(STREAMED_ANSWER_RESPONSE)
  @ApiProblems(401, 403, 404, 410, 422, 429, 502, 503)
  async run(
    @CurrentUser() user: SessionUser,
    @Param('id') id: string,
    @Body() body: SkillRunDto,
    @Req() req: Request,
    @Res() res: Response,
  ): Promise<void> {
    const stream = await this.skills.run(
      user,
      id,
      body,
      this.admission.runRequest(req, abortWhenClientLeaves(res)),
    );
    await writeAnswer(req, res, stream);
  }
}

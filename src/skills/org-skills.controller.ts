import {
  Body,
  Controller,
  Delete,
  Get,
  HttpCode,
  Param,
  Post,
  Put,
  Query,
  Req,
  Res,
} from '@nestjs/common';
import {
  ApiBody,
  ApiCreatedResponse,
  ApiNoContentResponse,
  ApiOkResponse,
  ApiOperation,
  ApiProduces,
  ApiTags,
} from '@nestjs/swagger';
import { Request, Response } from 'express';
import { CurrentUser } from '../auth/current-user.decorator';
import { SessionUser } from '../auth/session-user';
import { VerifiedEmailRequired } from '../auth/verified-email.guard';
import { ChatAdmission } from '../chat/admission/chat-admission';
import { STREAMED_ANSWER_RESPONSE } from '../chat/chat.controller';
import {
  abortWhenClientLeaves,
  writeAnswer,
} from '../chat/chat-response.writer';
import { ApiProblems } from '../common/openapi/api-problems.decorator';
import { LowerCasePipe } from '../common/validation/lower-case.pipe';
import { PageQueryDto } from '../common/pagination';
import { RateLimit } from '../common/rate-limit/rate-limit.decorator';
import {
  CreateSkillDto,
  ImportSkillDto,
  PublishVersionDto,
} from './dto/skill-input.dto';
import {
  SkillDto,
  SkillExportDto,
  SkillPageDto,
  SkillVersionDto,
} from './dto/skill.response';
import { SkillRunDto } from './dto/skill-run.dto';
import { SkillToolsDto } from './dto/skill-tools.dto';
import { SkillsService } from './skills.service';

/**
 * An organization's shared Skills: the same routes and rules as the caller's own under /v1/skills. Members
 * list, read, export and run them (runs bill the organization's pool); admins and owners create, import,
 * publish, set tools and delete. docs/adr/0062-organizations.md
 */
@ApiTags('organizations')
@Controller('orgs/:orgId/skills')
export class OrgSkillsController {
  constructor(
    private readonly skills: SkillsService,
    private readonly admission: ChatAdmission,
  ) {}

  @RateLimit('skill-write-user')
  @Post()
  @ApiOperation({
    summary:
      "Create an organization's Skill with its version 1 (admin or owner)",
  })
  @ApiCreatedResponse({ type: SkillDto })
  @ApiProblems(400, 401, 403, 404)
  create(
    @CurrentUser() user: SessionUser,
    @Param('orgId', LowerCasePipe) orgId: string,
    @Body() body: CreateSkillDto,
  ): Promise<SkillDto> {
    return this.skills.create(user, body, orgId);
  }

  @Get()
  @ApiOperation({
    summary: "The organization's Skills, newest first (cursor pagination)",
  })
  @ApiOkResponse({ type: SkillPageDto })
  @ApiProblems(401, 404)
  list(
    @CurrentUser() user: SessionUser,
    @Param('orgId', LowerCasePipe) orgId: string,
    @Query() query: PageQueryDto,
  ): Promise<SkillPageDto> {
    return this.skills.list(user, query, orgId);
  }

  @RateLimit('skill-write-user')
  @Post('import')
  @ApiOperation({
    summary:
      "Create an organization's Skill from the portable export shape (admin or owner)",
  })
  @ApiBody({ type: ImportSkillDto })
  @ApiCreatedResponse({ type: SkillDto })
  @ApiProblems(400, 401, 403, 404)
  import(
    @CurrentUser() user: SessionUser,
    @Param('orgId', LowerCasePipe) orgId: string,
    @Body() body: unknown,
  ): Promise<SkillDto> {
    return this.skills.import(user, body, orgId);
  }

  @Get(':id')
  @ApiOperation({
    summary: "One of the organization's Skills with its versions",
  })
  @ApiOkResponse({ type: SkillDto })
  @ApiProblems(401, 404)
  get(
    @CurrentUser() user: SessionUser,
    @Param('orgId', LowerCasePipe) orgId: string,
    @Param('id', LowerCasePipe) id: string,
  ): Promise<SkillDto> {
    return this.skills.get(user, id, orgId);
  }

  @Get(':id/export')
  @ApiOperation({ summary: 'The latest version in the portable shape' })
  @ApiOkResponse({ type: SkillExportDto })
  @ApiProblems(401, 404)
  export(
    @CurrentUser() user: SessionUser,
    @Param('orgId', LowerCasePipe) orgId: string,
    @Param('id', LowerCasePipe) id: string,
  ): Promise<SkillExportDto> {
    return this.skills.export(user, id, orgId);
  }

  @RateLimit('skill-write-user')
  @Put(':id/tools')
  @ApiOperation({
    summary: 'Set the tools its runs offer the model (admin or owner)',
  })
  @ApiOkResponse({ type: SkillDto })
  @ApiProblems(400, 401, 403, 404)
  setTools(
    @CurrentUser() user: SessionUser,
    @Param('orgId', LowerCasePipe) orgId: string,
    @Param('id', LowerCasePipe) id: string,
    @Body() body: SkillToolsDto,
  ): Promise<SkillDto> {
    return this.skills.setTools(user, id, body, orgId);
  }

  @RateLimit('skill-write-user')
  @Post(':id/versions')
  @ApiOperation({
    summary: 'Publish a new immutable version (n + 1; admin or owner)',
  })
  @ApiCreatedResponse({ type: SkillVersionDto })
  @ApiProblems(400, 401, 403, 404)
  publish(
    @CurrentUser() user: SessionUser,
    @Param('orgId', LowerCasePipe) orgId: string,
    @Param('id', LowerCasePipe) id: string,
    @Body() body: PublishVersionDto,
  ): Promise<SkillVersionDto> {
    return this.skills.publish(user, id, body, orgId);
  }

  @Delete(':id')
  @HttpCode(204)
  @ApiOperation({
    summary:
      "Delete an organization's Skill with its versions (admin or owner; conversations keep their messages)",
  })
  @ApiNoContentResponse()
  @ApiProblems(401, 403, 404)
  delete(
    @CurrentUser() user: SessionUser,
    @Param('orgId', LowerCasePipe) orgId: string,
    @Param('id', LowerCasePipe) id: string,
  ): Promise<void> {
    return this.skills.delete(user, id, orgId);
  }

  @VerifiedEmailRequired()
  @RateLimit('run-user')
  @Post(':id/run')
  @HttpCode(200)
  @ApiOperation({
    summary:
      "Run the latest version, billed to the organization's pool (idempotent, quota-limited, billed once)",
  })
  @ApiProduces('text/plain', 'text/event-stream')
  @ApiOkResponse(STREAMED_ANSWER_RESPONSE)
  @ApiProblems(400, 401, 403, 404, 410, 422, 429, 502, 503)
  async run(
    @CurrentUser() user: SessionUser,
    @Param('orgId', LowerCasePipe) orgId: string,
    @Param('id', LowerCasePipe) id: string,
    @Body() body: SkillRunDto,
    @Req() req: Request,
    @Res() res: Response,
  ): Promise<void> {
    const stream = await this.skills.run(
      user,
      id,
      body,
      this.admission.runRequest(req, abortWhenClientLeaves(res)),
      orgId,
    );
    await writeAnswer(req, res, stream);
  }
}

import {
  Body,
  Controller,
  Get,
  HttpCode,
  Param,
  Patch,
  Post,
} from '@nestjs/common';
import {
  ApiCreatedResponse,
  ApiOkResponse,
  ApiOperation,
} from '@nestjs/swagger';
import { CurrentUser } from '../auth/current-user.decorator';
import { SessionUser } from '../auth/session-user';
import { ApiProblems } from '../common/openapi/api-problems.decorator';
import { AdminOnly } from './admin.guard';
import { AdminCatalogService } from './admin-catalog.service';
import { AdminModelListDto, AdminPlanListDto } from './dto/admin-catalog.dto';
import {
  AdminTemplateDto,
  AdminTemplateListDto,
  CreateTemplateDto,
  TemplateReasonDto,
  UpdateTemplateDto,
} from './dto/admin-template.dto';

@AdminOnly()
@Controller('admin')
export class AdminCatalogController {
  constructor(private readonly catalog: AdminCatalogService) {}

  @Get('plans')
  @ApiOperation({
    summary: 'Plans as synced from the catalog file, inactive ones included',
  })
  @ApiOkResponse({ type: AdminPlanListDto })
  plans(): Promise<AdminPlanListDto> {
    return this.catalog.plans();
  }

  @Get('models')
  @ApiOperation({
    summary: 'Models as synced from the catalog file, inactive ones included',
  })
  @ApiOkResponse({ type: AdminModelListDto })
  models(): Promise<AdminModelListDto> {
    return this.catalog.models();
  }

  @Get('skill-templates')
  @ApiOperation({ summary: 'Every Skill template, retired ones included' })
  @ApiOkResponse({ type: AdminTemplateListDto })
  templates(): Promise<AdminTemplateListDto> {
    return this.catalog.listTemplates();
  }

  @Post('skill-templates')
  @ApiOperation({ summary: 'Add a Skill template (offered to users at once)' })
  @ApiCreatedResponse({ type: AdminTemplateDto })
  @ApiProblems(400, 409)
  create(
    @CurrentUser() admin: SessionUser,
    @Body() body: CreateTemplateDto,
  ): Promise<AdminTemplateDto> {
    return this.catalog.createTemplate(admin, body);
  }

  @Patch('skill-templates/:id')
  @ApiOperation({
    summary:
      'Change a Skill template; Skills already duplicated from it keep their copy',
  })
  @ApiOkResponse({ type: AdminTemplateDto })
  @ApiProblems(400, 404)
  update(
    @CurrentUser() admin: SessionUser,
    @Param('id') id: string,
    @Body() body: UpdateTemplateDto,
  ): Promise<AdminTemplateDto> {
    return this.catalog.updateTemplate(admin, id, body);
  }

  @Post('skill-templates/:id/retire')
  @HttpCode(200)
  @ApiOperation({
    summary:
      'Stop offering a Skill template (it stays listed here; the seed file never brings it back)',
  })
  @ApiOkResponse({ type: AdminTemplateDto })
  @ApiProblems(400, 404)
  retire(
    @CurrentUser() admin: SessionUser,
    @Param('id') id: string,
    @Body() body: TemplateReasonDto,
  ): Promise<AdminTemplateDto> {
    return this.catalog.retireTemplate(admin, id, body.reason, true);
  }

  @Post('skill-templates/:id/restore')
  @HttpCode(200)
  @ApiOperation({ summary: 'Offer a retired Skill template again' })
  @ApiOkResponse({ type: AdminTemplateDto })
  @ApiProblems(400, 404)
  restore(
    @CurrentUser() admin: SessionUser,
    @Param('id') id: string,
    @Body() body: TemplateReasonDto,
  ): Promise<AdminTemplateDto> {
    return this.catalog.retireTemplate(admin, id, body.reason, false);
  }
}

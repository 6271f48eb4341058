import {
  Body,
  Controller,
  Delete,
  Get,
  HttpCode,
  Param,
  Patch,
  Post,
  Query,
} from '@nestjs/common';
import {
  ApiCreatedResponse,
  ApiNoContentResponse,
  ApiOkResponse,
  ApiOperation,
  ApiTags,
} from '@nestjs/swagger';
import { CurrentUser } from '../auth/current-user.decorator';
import { SessionUser } from '../auth/session-user';
import { ApiProblems } from '../common/openapi/api-problems.decorator';
import { LowerCasePipe } from '../common/validation/lower-case.pipe';
import { RateLimit } from '../common/rate-limit/rate-limit.decorator';
import {
  MemberChangeDto,
  OrgNameDto,
  UsageQueryDto,
} from './dto/org-input.dto';
import {
  OrganizationDto,
  OrganizationListDto,
  OrgMemberDto,
  OrgMemberListDto,
  OrgQuotaDto,
  OrgUsageDto,
} from './dto/org.response';
import { OrgMembersService } from './org-members.service';
import { OrgQuotaService } from './org-quota.service';
import { OrgsService } from './orgs.service';

@ApiTags('organizations')
@Controller('orgs')
export class OrgsController {
  constructor(
    private readonly orgs: OrgsService,
    private readonly members: OrgMembersService,
    private readonly quotas: OrgQuotaService,
  ) {}

  @RateLimit('skill-write-user')
  @Post()
  @ApiOperation({ summary: 'Create an organization; the caller is its owner' })
  @ApiCreatedResponse({ type: OrganizationDto })
  @ApiProblems(400, 401)
  create(
    @CurrentUser() user: SessionUser,
    @Body() body: OrgNameDto,
  ): Promise<OrganizationDto> {
    return this.orgs.create(user, body);
  }

  @Get()
  @ApiOperation({ summary: "The caller's organizations, with their role" })
  @ApiOkResponse({ type: OrganizationListDto })
  @ApiProblems(401)
  list(@CurrentUser() user: SessionUser): Promise<OrganizationListDto> {
    return this.orgs.list(user);
  }

  @Get(':id')
  @ApiOperation({ summary: 'One organization (members only)' })
  @ApiOkResponse({ type: OrganizationDto })
  @ApiProblems(401, 404)
  get(
    @CurrentUser() user: SessionUser,
    @Param('id', LowerCasePipe) id: string,
  ): Promise<OrganizationDto> {
    return this.orgs.get(user, id);
  }

  @Patch(':id')
  @ApiOperation({ summary: 'Rename the organization (admin or owner)' })
  @ApiOkResponse({ type: OrganizationDto })
  @ApiProblems(400, 401, 403, 404)
  rename(
    @CurrentUser() user: SessionUser,
    @Param('id', LowerCasePipe) id: string,
    @Body() body: OrgNameDto,
  ): Promise<OrganizationDto> {
    return this.orgs.rename(user, id, body);
  }

  @Delete(':id')
  @HttpCode(204)
  @ApiOperation({
    summary:
      'Delete the organization with its Skills (owner; 409 while a subscription is active)',
  })
  @ApiNoContentResponse()
  @ApiProblems(401, 403, 404, 409)
  delete(
    @CurrentUser() user: SessionUser,
    @Param('id', LowerCasePipe) id: string,
  ): Promise<void> {
    return this.orgs.delete(user, id);
  }

  @Get(':id/members')
  @ApiOperation({ summary: 'The members, with their roles and caps' })
  @ApiOkResponse({ type: OrgMemberListDto })
  @ApiProblems(401, 404)
  listMembers(
    @CurrentUser() user: SessionUser,
    @Param('id', LowerCasePipe) id: string,
  ): Promise<OrgMemberListDto> {
    return this.members.list(user, id);
  }

  @Patch(':id/members/:userId')
  @ApiOperation({
    summary:
      "Change a member's role or daily credit cap (admin or owner; owners only by an owner; the last owner stays)",
  })
  @ApiOkResponse({ type: OrgMemberDto })
  @ApiProblems(400, 401, 403, 404, 409)
  changeMember(
    @CurrentUser() user: SessionUser,
    @Param('id', LowerCasePipe) id: string,
    @Param('userId', LowerCasePipe) userId: string,
    @Body() body: MemberChangeDto,
  ): Promise<OrgMemberDto> {
    return this.members.change(user, id, userId, body);
  }

  @Delete(':id/members/:userId')
  @HttpCode(204)
  @ApiOperation({
    summary:
      'Remove a member (admin or owner), or leave (your own id); the last owner cannot leave',
  })
  @ApiNoContentResponse()
  @ApiProblems(401, 403, 404, 409)
  removeMember(
    @CurrentUser() user: SessionUser,
    @Param('id', LowerCasePipe) id: string,
    @Param('userId', LowerCasePipe) userId: string,
  ): Promise<void> {
    return this.members.remove(user, id, userId);
  }

  @Get(':id/quota')
  @ApiOperation({
    summary: "The organization's credit pool today and the caller's own cap",
  })
  @ApiOkResponse({ type: OrgQuotaDto })
  @ApiProblems(401, 404)
  quota(
    @CurrentUser() user: SessionUser,
    @Param('id', LowerCasePipe) id: string,
  ): Promise<OrgQuotaDto> {
    return this.quotas.quota(user, id);
  }

  @Get(':id/usage')
  @ApiOperation({
    summary:
      'Credits per member per UTC day from the ledger (admin or owner; at most 366 days)',
  })
  @ApiOkResponse({ type: OrgUsageDto })
  @ApiProblems(400, 401, 403, 404)
  usage(
    @CurrentUser() user: SessionUser,
    @Param('id', LowerCasePipe) id: string,
    @Query() query: UsageQueryDto,
  ): Promise<OrgUsageDto> {
    return this.quotas.usage(user, id, query);
  }
}

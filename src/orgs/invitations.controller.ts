import {
  Body,
  Controller,
  Delete,
  Get,
  HttpCode,
  Param,
  Post,
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
import { VerifiedEmailRequired } from '../auth/verified-email.guard';
import { ApiProblems } from '../common/openapi/api-problems.decorator';
import { LowerCasePipe } from '../common/validation/lower-case.pipe';
import { RateLimit } from '../common/rate-limit/rate-limit.decorator';
import { AcceptInvitationDto, InvitationInputDto } from './dto/org-input.dto';
import {
  InvitationDto,
  InvitationListDto,
  OrganizationDto,
} from './dto/org.response';
import { InvitationsService } from './invitations.service';

@ApiTags('organizations')
@Controller('orgs')
export class InvitationsController {
  constructor(private readonly invitations: InvitationsService) {}

  @RateLimit('invite-user')
  @Post('invitations/accept')
  @HttpCode(200)
  @ApiOperation({
    summary:
      'Accept an invitation: the signed-in account with the verified invited address becomes a member',
  })
  @ApiOkResponse({ type: OrganizationDto })
  @ApiProblems(400, 401, 403, 404, 409, 410)
  accept(
    @CurrentUser() user: SessionUser,
    @Body() body: AcceptInvitationDto,
  ): Promise<OrganizationDto> {
    return this.invitations.accept(user, body);
  }

  // Invitations send mail: with REQUIRE_EMAIL_VERIFICATION, only from a verified account.
  @VerifiedEmailRequired()
  @RateLimit('invite-user')
  @Post(':id/invitations')
  @ApiOperation({
    summary:
      'Mail a single-use invitation link, valid 7 days (admin or owner; owners invited only by an owner)',
  })
  @ApiCreatedResponse({ type: InvitationDto })
  @ApiProblems(400, 401, 403, 404, 409)
  invite(
    @CurrentUser() user: SessionUser,
    @Param('id', LowerCasePipe) id: string,
    @Body() body: InvitationInputDto,
  ): Promise<InvitationDto> {
    return this.invitations.invite(user, id, body);
  }

  @Get(':id/invitations')
  @ApiOperation({ summary: 'Pending invitations (admin or owner)' })
  @ApiOkResponse({ type: InvitationListDto })
  @ApiProblems(401, 403, 404)
  list(
    @CurrentUser() user: SessionUser,
    @Param('id', LowerCasePipe) id: string,
  ): Promise<InvitationListDto> {
    return this.invitations.listPending(user, id);
  }

  @Delete(':id/invitations/:invitationId')
  @HttpCode(204)
  @ApiOperation({ summary: 'Revoke a pending invitation (admin or owner)' })
  @ApiNoContentResponse()
  @ApiProblems(401, 403, 404)
  revoke(
    @CurrentUser() user: SessionUser,
    @Param('id', LowerCasePipe) id: string,
    @Param('invitationId', LowerCasePipe) invitationId: string,
  ): Promise<void> {
    return this.invitations.revoke(user, id, invitationId);
  }
}

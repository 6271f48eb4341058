import { Body, Controller, HttpCode, Param, Patch } from '@nestjs/common';
import { ApiAcceptedResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { CurrentUser } from '../auth/current-user.decorator';
import { SessionUser } from '../auth/session-user';
import { VerifiedEmailRequired } from '../auth/verified-email.guard';
import { ApiProblems } from '../common/openapi/api-problems.decorator';
import { LowerCasePipe } from '../common/validation/lower-case.pipe';
import { OrgSeatChangeDto, OrgSeatsDto } from './dto/org-subscription.dto';
import { OrgSubscriptionService } from './org-subscription.service';

/** An organization's subscription, in billing: organizations never depend on billing. */
@ApiTags('organizations')
@Controller('orgs')
export class OrgSubscriptionController {
  constructor(private readonly subscriptions: OrgSubscriptionService) {}

  @VerifiedEmailRequired()
  @Patch(':id/subscription')
  @HttpCode(202)
  @ApiOperation({
    summary:
      "Change the seats of the organization's subscription at the provider (admin or owner; prorated)",
    description:
      'The provider is asked for the new quantity with proration; the organization’s seats and pool change only when ' +
      'the provider’s webhook confirms it. 404 when the organization has no live subscription; 409 seats_exhausted ' +
      'below the number of members; 502 when the provider refuses (nothing changed).',
  })
  @ApiAcceptedResponse({ type: OrgSeatChangeDto })
  @ApiProblems(400, 401, 403, 404, 409, 502, 503)
  changeSeats(
    @CurrentUser() user: SessionUser,
    @Param('id', LowerCasePipe) id: string,
    @Body() body: OrgSeatsDto,
  ): Promise<OrgSeatChangeDto> {
    return this.subscriptions.changeSeats(user, id, body);
  }
}

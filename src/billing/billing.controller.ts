import { Body, Controller, Get, Post, Res } from '@nestjs/common';
import { VerifiedEmailRequired } from '../auth/verified-email.guard';
import {
  ApiCreatedResponse,
  ApiOkResponse,
  ApiOperation,
  ApiTags,
} from '@nestjs/swagger';
import { Response } from 'express';
import { CurrentUser } from '../auth/current-user.decorator';
import { SessionUser } from '../auth/session-user';
import { ApiProblems } from '../common/openapi/api-problems.decorator';
import { CheckoutService } from './checkout.service';
import { CheckoutRequestDto } from './dto/checkout.request';
import { CheckoutDto } from './dto/checkout.response';
import { SubscriptionDto } from './dto/subscription.response';
import { SubscriptionsService } from './subscriptions.service';

@ApiTags('billing')
@Controller('billing')
export class BillingController {
  constructor(
    private readonly checkouts: CheckoutService,
    private readonly subscriptions: SubscriptionsService,
  ) {}

  @VerifiedEmailRequired()
  @Post('checkout')
  @ApiOperation({
    summary:
      'Start buying a plan (or an organization’s seats) through Stripe or Paddle; the price is the plan’s, the plan changes when the provider confirms payment',
    description:
      '201 with a new provider checkout; 200 with the same checkout when the same order is still pending (a double click). ' +
      'Free and Enterprise are 400 plan_not_checkoutable; a provider this server has no credentials for is 503 provider_not_configured; ' +
      'a renewing subscription is 409 subscription_exists. ' +
      'With organizationId and seats (admin or owner of it: 404 for non-members, 403 org_role_required for members), the Team plan ' +
      '(other plans: 400 plan_not_for_organizations) is bought for the organization at its price times the seats; ' +
      '409 conflict while another checkout of the organization is open.',
  })
  @ApiCreatedResponse({ type: CheckoutDto })
  @ApiOkResponse({
    type: CheckoutDto,
    description: 'The pending checkout of the same plan and provider.',
  })
  @ApiProblems(400, 401, 403, 404, 409, 502, 503)
  async checkout(
    @CurrentUser() user: SessionUser,
    @Body() body: CheckoutRequestDto,
    @Res({ passthrough: true }) res: Response,
  ): Promise<CheckoutDto> {
    const { checkout, created } = await this.checkouts.start(user, body);
    res.status(created ? 201 : 200);
    return checkout;
  }

  @Get('subscription')
  @ApiOperation({
    summary:
      "The caller's plan, and the status and period of the subscription it comes from",
  })
  @ApiOkResponse({ type: SubscriptionDto })
  @ApiProblems(401)
  subscription(@CurrentUser() user: SessionUser): Promise<SubscriptionDto> {
    return this.subscriptions.view(user);
  }
}

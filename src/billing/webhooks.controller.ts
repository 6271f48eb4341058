import {
  Controller,
  Headers,
  HttpCode,
  Post,
  RawBodyRequest,
  Req,
} from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { Request } from 'express';
import { Public } from '../common/decorators/public.decorator';
import { ApiProblems } from '../common/openapi/api-problems.decorator';
import { WebhookAckDto } from './dto/webhook-ack.response';
import { WebhooksService } from './webhooks.service';

const INTERNAL =
  'Internal: called by the payment provider only, authenticated by its signature over the raw body (no session, no CSRF check). ';

@ApiTags('internal: payment webhooks')
@Controller('webhooks')
@Public()
export class WebhooksController {
  constructor(private readonly webhooks: WebhooksService) {}

  @Post('stripe')
  @HttpCode(200)
  @ApiOperation({
    summary: 'Stripe events (internal)',
    description:
      `${INTERNAL}Stripe-Signature, 300 s tolerance. Handles ` +
      `checkout.session.completed/expired and customer.subscription.*; other ` +
      `types are acknowledged and ignored.`,
  })
  @ApiOkResponse({ type: WebhookAckDto })
  @ApiProblems(400, 503)
  stripe(
    @Req() req: RawBodyRequest<Request>,
    @Headers('stripe-signature') signature?: string,
  ): Promise<WebhookAckDto> {
    return this.webhooks.receive('stripe', req.rawBody, signature);
  }

  @Post('paddle')
  @HttpCode(200)
  @ApiOperation({
    summary: 'Paddle notifications (internal)',
    description:
      `${INTERNAL}Paddle-Signature (ts;h1, any valid h1 during secret rotation, ` +
      `5 s tolerance). Handles transaction.completed and subscription.*; other ` +
      `types are acknowledged and ignored.`,
  })
  @ApiOkResponse({ type: WebhookAckDto })
  @ApiProblems(400, 503)
  paddle(
    @Req() req: RawBodyRequest<Request>,
    @Headers('paddle-signature') signature?: string,
  ): Promise<WebhookAckDto> {
    return this.webhooks.receive('paddle', req.rawBody, signature);
  }
}

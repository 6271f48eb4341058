import { Module } from '@nestjs/common';
import { BillingController } from './billing.controller';
import { BillingRepository } from './billing.repository';
import { BillingSweeperService } from './billing-sweeper.service';
import { CheckoutService } from './checkout.service';
import { PaddleGateway } from './providers/paddle.gateway';
import { PaymentGateways } from './providers/payment-gateways';
import { StripeGateway } from './providers/stripe.gateway';
import { SubscriptionsService } from './subscriptions.service';
import { WebhooksController } from './webhooks.controller';
import { WebhooksService } from './webhooks.service';

@Module({
  controllers: [BillingController, WebhooksController],
  providers: [
    BillingRepository,
    StripeGateway,
    PaddleGateway,
    PaymentGateways,
    CheckoutService,
    SubscriptionsService,
    WebhooksService,
    BillingSweeperService,
  ],
  // PaymentGateways: account erasure cancels subscriptions at their provider.
  exports: [SubscriptionsService, PaymentGateways],
})
export class BillingModule {}

import { Module } from '@nestjs/common';
import { AuditModule } from '../audit/audit.module';
import { OrgsModule } from '../orgs/orgs.module';
import { BillingController } from './billing.controller';
import { BillingRepository } from './billing.repository';
import { BillingSweeperService } from './billing-sweeper.service';
import { CheckoutService } from './checkout.service';
import { OrgSubscriptionController } from './org-subscription.controller';
import { OrgSubscriptionService } from './org-subscription.service';
import { PaddleGateway } from './providers/paddle.gateway';
import { PaymentGateways } from './providers/payment-gateways';
import { StripeGateway } from './providers/stripe.gateway';
import { SubscriptionsService } from './subscriptions.service';
import { WebhooksController } from './webhooks.controller';
import { WebhooksService } from './webhooks.service';

/** Checkout, provider webhooks, subscriptions and the plans and seats they give (users and organizations). */
@Module({
  imports: [AuditModule, OrgsModule],
  controllers: [
    BillingController,
    OrgSubscriptionController,
    WebhooksController,
  ],
  providers: [
    BillingRepository,
    StripeGateway,
    PaddleGateway,
    PaymentGateways,
    CheckoutService,
    OrgSubscriptionService,
    SubscriptionsService,
    WebhooksService,
    BillingSweeperService,
  ],
  // PaymentGateways: account erasure cancels subscriptions at their provider.
  exports: [SubscriptionsService, PaymentGateways],
})
export class BillingModule {}

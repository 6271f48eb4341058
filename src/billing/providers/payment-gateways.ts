import { Injectable } from '@nestjs/common';
import { PaddleGateway } from './paddle.gateway';
import { PaymentGateway, PaymentProviderName } from './payment-gateway';
import { StripeGateway } from './stripe.gateway';

/** The gateway of each provider name the API accepts. */
@Injectable()
export class PaymentGateways {
  private readonly byName: Record<PaymentProviderName, PaymentGateway>;

  constructor(stripe: StripeGateway, paddle: PaddleGateway) {
    this.byName = { stripe, paddle };
  }

  get(provider: PaymentProviderName): PaymentGateway {
    return this.byName[provider];
  }
}

import { Injectable } from '@nestjs/common';
import { Clock } from '../common/clock';
import { AppError } from '../common/errors/app-error';
import { AppLogger } from '../common/logging/app-logger';
import { Metrics, WebhookOutcome } from '../infra/metrics/metrics';
import { Db } from '../infra/prisma/prisma.service';
import { BillingRepository } from './billing.repository';
import { WebhookAckDto } from './dto/webhook-ack.response';
import { PaymentGateways } from './providers/payment-gateways';
import {
  BillingAction,
  PaymentGateway,
  PaymentProviderName,
  VerifiedWebhook,
} from './providers/payment-gateway';
import { SubscriptionsService } from './subscriptions.service';

/**
 * Inbound provider webhooks: verify the signature over the raw body, then record the event and apply it in
 * one transaction. The event row is the de-duplication: a redelivery (or a concurrent copy, which waits on
 * the first's insert) finds it and changes nothing; a failure rolls everything back and answers 503, so the
 * provider delivers again and the event is applied exactly once.
 * docs/adr/0048-payment-providers-and-webhooks.md
 */
@Injectable()
export class WebhooksService {
  constructor(
    private readonly gateways: PaymentGateways,
    private readonly billing: BillingRepository,
    private readonly subscriptions: SubscriptionsService,
    private readonly clock: Clock,
    private readonly log: AppLogger,
    private readonly metrics: Metrics,
  ) {}

  /** Every delivery is counted by its outcome: applied, duplicate, invalid (refused) or failed (503). */
  async receive(
    provider: PaymentProviderName,
    rawBody: Buffer | undefined,
    signature: string | undefined,
  ): Promise<WebhookAckDto> {
    try {
      const ack = await this.verifyAndApply(provider, rawBody, signature);
      this.metrics.webhook(provider, ack.duplicate ? 'duplicate' : 'applied');
      return ack;
    } catch (error) {
      this.metrics.webhook(provider, webhookFailure(error));
      throw error;
    }
  }

  private async verifyAndApply(
    provider: PaymentProviderName,
    rawBody: Buffer | undefined,
    signature: string | undefined,
  ): Promise<WebhookAckDto> {
    const gateway = this.gateways.get(provider);
    if (!gateway.canVerifyWebhooks())
      throw new AppError(
        'provider_not_configured',
        `${gateway.provider} webhooks are not configured on this server.`,
      );
    if (!rawBody || rawBody.length === 0)
      throw new AppError(
        'webhook_payload_invalid',
        'The webhook has no JSON body.',
      );
    const now = this.clock.now();
    const webhook = await gateway.verifyWebhook(rawBody, signature, now);
    refuseImplausibleTime(webhook.occurredAt, now);
    try {
      const fresh = await this.applyOnce(gateway, webhook);
      if (fresh)
        this.log.info(
          { provider, eventId: webhook.eventId, type: webhook.type },
          'webhook applied',
        );
      return { received: true, duplicate: !fresh };
    } catch (error) {
      if (error instanceof AppError) throw error;
      this.log.error(
        { err: error, provider, eventId: webhook.eventId, type: webhook.type },
        'webhook could not be applied; the provider will deliver it again',
      );
      throw new AppError(
        'webhook_not_processed',
        'The event could not be applied now and nothing was changed; deliver it again.',
        { headers: { 'Retry-After': '60' } },
      );
    }
  }

  /** True when this delivery applied the event, false when it had been applied before. */
  private async applyOnce(
    gateway: PaymentGateway,
    webhook: VerifiedWebhook,
  ): Promise<boolean> {
    const { provider } = gateway;
    // A cheap early answer for redeliveries, before any provider lookup; the insert below is what decides.
    if (await this.billing.isEventRecorded(provider, webhook.eventId))
      return false;
    const action = await this.cancelIfBuyerErased(
      gateway,
      await gateway.interpret(webhook),
    );
    return this.billing.inTransaction(async (db) => {
      const recorded = await this.billing.recordEvent(db, {
        provider,
        eventId: webhook.eventId,
        type: webhook.type,
        occurredAt: webhook.occurredAt,
      });
      if (recorded) await this.apply(db, provider, webhook, action);
      return recorded;
    });
  }

  /**
   * A checkout left open when its buyer erased the account (or when the organization it buys seats for was
   * deleted) can still be paid, and a provider may report a subscription of an erased account as live again:
   * it is canceled at the provider before the event is recorded, so a failure (503) has the provider deliver
   * the event again and the cancellation is retried. The event is then applied as the cancellation it became.
   */
  private async cancelIfBuyerErased(
    gateway: PaymentGateway,
    action: BillingAction,
  ): Promise<BillingAction> {
    if (
      action.kind !== 'checkout_completed' &&
      action.kind !== 'subscription_changed'
    )
      return action;
    const snapshot = action.subscription;
    if (!snapshot || snapshot.status === 'canceled') return action;
    const sessionId =
      action.kind === 'checkout_completed'
        ? action.providerSessionId
        : (snapshot.checkoutSessionId ?? null);
    const erased = await this.billing.isBoughtByErasedAccount(
      gateway.provider,
      snapshot.providerSubscriptionId,
      sessionId,
    );
    if (
      !erased &&
      !(await this.billing.isForMissingOrganization(
        gateway.provider,
        snapshot.providerSubscriptionId,
        sessionId,
      ))
    )
      return action;
    await gateway.cancelSubscription(snapshot.providerSubscriptionId);
    this.log.warn(
      {
        provider: gateway.provider,
        subscription: snapshot.providerSubscriptionId,
      },
      erased
        ? 'subscription of an erased account canceled at the provider'
        : 'subscription of a deleted organization canceled at the provider',
    );
    return {
      ...action,
      subscription: {
        ...snapshot,
        status: 'canceled',
        canceledAt: snapshot.canceledAt ?? this.clock.now(),
      },
    };
  }

  private async apply(
    db: Db,
    provider: PaymentProviderName,
    webhook: VerifiedWebhook,
    action: BillingAction,
  ): Promise<void> {
    switch (action.kind) {
      case 'checkout_completed': {
        const checkout = await this.billing.lockCheckoutBySession(
          db,
          provider,
          action.providerSessionId,
        );
        if (checkout)
          await this.billing.markCheckoutCompleted(
            db,
            checkout.id,
            webhook.occurredAt,
          );
        if (!action.subscription) return;
        // Our own record of the session names the buyer, whatever the metadata says.
        const subscription = checkout
          ? { ...action.subscription, checkoutId: checkout.id }
          : action.subscription;
        return this.subscriptions.apply(
          db,
          provider,
          subscription,
          webhook.occurredAt,
        );
      }
      case 'checkout_expired':
        return this.billing.markCheckoutExpired(
          db,
          provider,
          action.providerSessionId,
        );
      case 'subscription_changed':
        return this.subscriptions.apply(
          db,
          provider,
          action.subscription,
          webhook.occurredAt,
        );
      case 'ignored':
        return;
    }
  }
}

/** A delivery refused for what it is (4xx: signature, payload) is invalid; one that could not be applied now (5xx, delivered again) failed. */
function webhookFailure(error: unknown): WebhookOutcome {
  return error instanceof AppError && error.status < 500 ? 'invalid' : 'failed';
}

const EARLIEST_EVENT = Date.UTC(2000, 0, 1);
const MAX_EVENT_CLOCK_SKEW_MS = 24 * 3600 * 1000;

/**
 * Event times order the events of a subscription; one far in the future would make every later real event
 * look stale, one the database cannot store would fail for ever. Both are refused with 400 (nothing changes).
 */
function refuseImplausibleTime(occurredAt: Date, now: Date): void {
  const time = occurredAt.getTime();
  if (
    Number.isNaN(time) ||
    time < EARLIEST_EVENT ||
    time > now.getTime() + MAX_EVENT_CLOCK_SKEW_MS
  ) {
    throw new AppError(
      'webhook_payload_invalid',
      'The event time is not plausible (before 2000 or more than a day ahead).',
      {
        errors: [
          {
            field: 'created',
            code: 'out_of_range',
            message: 'event time out of range',
          },
        ],
      },
    );
  }
}

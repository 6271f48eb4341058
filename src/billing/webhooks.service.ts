import { Injectable } from '@nestjs/common';
import { AuditRepository } from '../audit/audit.repository';
import { Clock } from '../common/clock';
import { AppError } from '../common/errors/app-error';
import { AppLogger } from '../common/logging/app-logger';
import { Metrics, WebhookOutcome } from '../infra/metrics/metrics';
import { Db } from '../infra/prisma/prisma.service';
import {
  BillingRepository,
  LiveOrganizationSubscription,
} from './billing.repository';
import { WebhookAckDto } from './dto/webhook-ack.response';
import { renewingRival } from './organization-subscriptions';
import { PaymentGateways } from './providers/payment-gateways';
import {
  BillingAction,
  PaymentGateway,
  PaymentProviderName,
  VerifiedWebhook,
} from './providers/payment-gateway';
import { SubscriptionSnapshot } from './subscription-state';
import { SubscriptionsService } from './subscriptions.service';

/** Why a subscription an event makes live must not bill: canceled at the provider before the event is applied. */
type Unwanted =
  | { kind: 'erased' }
  | { kind: 'organization_deleted' }
  | {
      /** A second renewing subscription of one organization: the one it already pays for is kept. */
      kind: 'second_subscription';
      organizationId: string;
      kept: LiveOrganizationSubscription;
    };

const UNWANTED_LOG: Record<Unwanted['kind'], string> = {
  erased: 'subscription of an erased account canceled at the provider',
  organization_deleted:
    'subscription of a deleted organization canceled at the provider',
  second_subscription:
    'second renewing subscription of an organization canceled at the provider: refund its payment by hand',
};

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
    private readonly audit: AuditRepository,
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
    const { action, unwanted } = await this.cancelIfUnwanted(
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
      if (!recorded) return false;
      await this.apply(db, provider, webhook, action);
      if (unwanted?.kind === 'second_subscription')
        await this.audit.record(db, {
          adminId: null,
          action: 'org.subscription.cancel_second',
          targetType: 'organization',
          targetId: unwanted.organizationId,
          before: {
            renewing: {
              subscriptionId: unwanted.kept.id,
              provider: unwanted.kept.provider,
              providerSubscriptionId: unwanted.kept.providerSubscriptionId,
              seats: unwanted.kept.seats,
            },
          },
          after: {
            canceled: {
              provider,
              providerSubscriptionId:
                subscriptionOf(action)?.providerSubscriptionId ?? null,
              seats: subscriptionOf(action)?.quantity ?? null,
            },
          },
          reason:
            'The organization already had a renewing subscription; the second one was canceled at the provider. Its payment is refunded by hand.',
        });
      return true;
    });
  }

  /**
   * A checkout left open when its buyer erased the account (or when the organization it buys seats for was
   * deleted) can still be paid, and a provider may report a subscription of an erased account as live again;
   * and an organization's second checkout (opened before the first was paid, or one its provider could not
   * expire) can be paid while another subscription of the organization renews. Such a subscription is canceled
   * at the provider before the event is recorded, so a failure (503) has the provider deliver the event again
   * and the cancellation is retried. The event is then applied as the cancellation it became; the first
   * subscription of the organization is kept.
   */
  private async cancelIfUnwanted(
    gateway: PaymentGateway,
    action: BillingAction,
  ): Promise<{ action: BillingAction; unwanted: Unwanted | null }> {
    const snapshot = subscriptionOf(action);
    if (!snapshot || snapshot.status === 'canceled')
      return { action, unwanted: null };
    const sessionId =
      action.kind === 'checkout_completed'
        ? action.providerSessionId
        : (snapshot.checkoutSessionId ?? null);
    const unwanted = await this.unwanted(gateway.provider, snapshot, sessionId);
    if (!unwanted) return { action, unwanted: null };
    await gateway.cancelSubscription(snapshot.providerSubscriptionId);
    this.log.warn(
      {
        provider: gateway.provider,
        subscription: snapshot.providerSubscriptionId,
        ...(unwanted.kind === 'second_subscription'
          ? {
              organization: unwanted.organizationId,
              kept: {
                subscriptionId: unwanted.kept.id,
                provider: unwanted.kept.provider,
                providerSubscriptionId: unwanted.kept.providerSubscriptionId,
              },
            }
          : {}),
      },
      UNWANTED_LOG[unwanted.kind],
    );
    const canceled: SubscriptionSnapshot = {
      ...snapshot,
      status: 'canceled',
      canceledAt: snapshot.canceledAt ?? this.clock.now(),
    };
    return {
      action:
        action.kind === 'checkout_completed'
          ? { ...action, subscription: canceled }
          : { kind: 'subscription_changed', subscription: canceled },
      unwanted,
    };
  }

  private async unwanted(
    provider: PaymentProviderName,
    snapshot: SubscriptionSnapshot,
    sessionId: string | null,
  ): Promise<Unwanted | null> {
    const { providerSubscriptionId } = snapshot;
    if (
      await this.billing.isBoughtByErasedAccount(
        provider,
        providerSubscriptionId,
        sessionId,
      )
    )
      return { kind: 'erased' };
    if (
      await this.billing.isForMissingOrganization(
        provider,
        providerSubscriptionId,
        sessionId,
      )
    )
      return { kind: 'organization_deleted' };
    const purchase = await this.billing.findOrganizationPurchase(
      provider,
      providerSubscriptionId,
      sessionId,
    );
    if (!purchase) return null;
    const kept = renewingRival(
      {
        provider,
        providerSubscriptionId,
        status: snapshot.status,
        storedStatus: purchase.status,
      },
      await this.billing.findLiveSubscriptionsOfOrganization(
        purchase.organizationId,
      ),
    );
    return kept
      ? {
          kind: 'second_subscription',
          organizationId: purchase.organizationId,
          kept,
        }
      : null;
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

/** The subscription an event is about, when it is about one. */
function subscriptionOf(action: BillingAction): SubscriptionSnapshot | null {
  if (action.kind === 'checkout_completed') return action.subscription;
  if (action.kind === 'subscription_changed') return action.subscription;
  return null;
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

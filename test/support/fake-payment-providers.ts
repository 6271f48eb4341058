import { randomBytes } from 'node:crypto';
import { IncomingMessage, ServerResponse } from 'node:http';
import { LoopbackServer, readBody } from './loopback-server';

export interface RecordedRequest {
  method: string;
  /** The path without its query: providers route by path (the Paddle SDK sends `/transactions?` on Node 24). */
  path: string;
  /** What follows the `?`, if anything. */
  query: string;
  headers: IncomingMessage['headers'];
  body: string;
}

/** Shared behaviour of the payment fakes: every request kept, an optional delay and an optional failure. */
abstract class FakePaymentProvider extends LoopbackServer {
  readonly requests: RecordedRequest[] = [];
  /** Milliseconds to wait before answering (widens race windows). */
  delayMs = 0;
  /** When set, creation requests answer this status with the provider's error body. */
  failWith: number | null = null;
  /** When set, subscription cancellations answer this status with the provider's error body. */
  cancelFailWith: number | null = null;
  /** When set, every new session gets this id (a misbehaving provider). */
  reuseId: string | null = null;
  /** Ids unique across fakes and runs: suites share one database, whose checkouts keep provider ids unique. */
  protected newId(prefix: string): string {
    if (this.reuseId) return this.reuseId;
    return `${prefix}${randomBytes(13).toString('hex')}`;
  }

  protected async record(req: IncomingMessage): Promise<RecordedRequest> {
    const url = req.url ?? '';
    const queryAt = url.indexOf('?');
    const recorded = {
      method: req.method ?? '',
      path: queryAt === -1 ? url : url.slice(0, queryAt),
      query: queryAt === -1 ? '' : url.slice(queryAt + 1),
      headers: req.headers,
      body: await readBody(req),
    };
    this.requests.push(recorded);
    if (this.delayMs > 0)
      await new Promise((done) => setTimeout(done, this.delayMs));
    return recorded;
  }

  protected send(res: ServerResponse, status: number, body: unknown): void {
    res
      .writeHead(status, { 'Content-Type': 'application/json' })
      .end(JSON.stringify(body));
  }

  creations(): RecordedRequest[] {
    return this.requests.filter(
      (request) =>
        request.method === 'POST' &&
        !this.isCancellation(request) &&
        !this.isUpdate(request) &&
        !this.isExpiration(request),
    );
  }

  /** Checkouts given up at the provider (Stripe: session expired; Paddle: transaction canceled). */
  expirations(): RecordedRequest[] {
    return this.requests.filter((request) => this.isExpiration(request));
  }

  cancellations(): RecordedRequest[] {
    return this.requests.filter((request) => this.isCancellation(request));
  }

  /** Changes of an existing subscription (its items' quantities). */
  updates(): RecordedRequest[] {
    return this.requests.filter((request) => this.isUpdate(request));
  }

  protected abstract isCancellation(request: RecordedRequest): boolean;
  protected abstract isUpdate(request: RecordedRequest): boolean;
  protected abstract isExpiration(request: RecordedRequest): boolean;
}

/**
 * Stripe's REST API as the SDK speaks it: form-encoded POST /v1/checkout/sessions (honouring Idempotency-Key
 * like Stripe: the same key answers the first response again; `expires_at` 30 minutes to 24 hours ahead),
 * GET /v1/checkout/sessions/:id, POST /v1/checkout/sessions/:id/expire (open sessions only),
 * GET /v1/subscriptions/:id, POST /v1/subscriptions/:id (item quantities: at once, or, with
 * `payment_behavior=pending_if_incomplete` and an invoice that cannot be paid, held in `pending_update`) and
 * DELETE /v1/subscriptions/:id (cancel now).
 */
export class FakeStripe extends FakePaymentProvider {
  /** Subscriptions GET /v1/subscriptions/:id answers, by id. */
  readonly subscriptions = new Map<string, Record<string, unknown>>();
  /** Checkout Sessions by id, as Stripe keeps them (`status` open, complete or expired). */
  readonly sessions = new Map<string, Record<string, unknown>>();
  /** When set, the customer's payments fail (a declined card): invoices made by an update stay open. */
  declinePayments = false;
  private readonly byIdempotencyKey = new Map<string, unknown>();

  /** The buyer pays the session: it is `complete` and can no longer be expired. */
  completeSession(id: string): void {
    const session = this.sessions.get(id);
    if (session) this.sessions.set(id, { ...session, status: 'complete' });
  }

  /**
   * The open invoice of a pending update is paid (the customer fixed their card): as Stripe, the pending items
   * become the subscription's and `pending_update` is cleared. Answers the subscription as it now is.
   */
  payPendingUpdate(id: string): Record<string, unknown> {
    const found = this.subscriptions.get(id);
    const pending = found?.pending_update as
      | { subscription_items: { id: string; quantity: number }[] }
      | null
      | undefined;
    if (!found || !pending) throw new Error(`no pending update on ${id}`);
    const items = found.items as { data: Record<string, unknown>[] };
    const data = items.data.map((item) => {
      const next = pending.subscription_items.find(
        (candidate) => candidate.id === item.id,
      );
      return next ? { ...item, quantity: next.quantity } : item;
    });
    const applied = {
      ...found,
      items: { ...items, data },
      pending_update: null,
    };
    this.subscriptions.set(id, applied);
    return applied;
  }

  protected async handle(
    req: IncomingMessage,
    res: ServerResponse,
  ): Promise<void> {
    const request = await this.record(req);
    const path = request.path;
    if (request.method === 'POST' && path === '/v1/checkout/sessions')
      return this.createSession(request, res);
    const session = /^\/v1\/checkout\/sessions\/([^/]+)(\/expire)?$/.exec(path);
    if (session && request.method === 'GET' && !session[2]) {
      const found = this.sessions.get(decodeURIComponent(session[1]));
      if (found) return this.send(res, 200, found);
      return this.send(res, 404, noSuchSession(decodeURIComponent(session[1])));
    }
    if (session && request.method === 'POST' && session[2])
      return this.expireSession(decodeURIComponent(session[1]), res);
    const subscription = /^\/v1\/subscriptions\/([^/]+)$/.exec(path);
    if (request.method === 'GET' && subscription) {
      const found = this.subscriptions.get(decodeURIComponent(subscription[1]));
      if (found) return this.send(res, 200, found);
      return this.send(
        res,
        404,
        noSuchSubscription(decodeURIComponent(subscription[1])),
      );
    }
    if (request.method === 'DELETE' && subscription)
      return this.cancelSubscription(decodeURIComponent(subscription[1]), res);
    if (request.method === 'POST' && subscription)
      return this.updateSubscription(
        decodeURIComponent(subscription[1]),
        request,
        res,
      );
    this.send(res, 404, {
      error: {
        type: 'invalid_request_error',
        message: `Unrecognized request URL (${request.method}: ${path})`,
      },
    });
  }

  protected isCancellation(request: RecordedRequest): boolean {
    return (
      request.method === 'DELETE' &&
      /^\/v1\/subscriptions\/[^/?]+/.test(request.path)
    );
  }

  protected isUpdate(request: RecordedRequest): boolean {
    return (
      request.method === 'POST' &&
      /^\/v1\/subscriptions\/[^/?]+$/.test(request.path)
    );
  }

  protected isExpiration(request: RecordedRequest): boolean {
    return (
      request.method === 'POST' &&
      /^\/v1\/checkout\/sessions\/[^/?]+\/expire$/.test(request.path)
    );
  }

  /** As Stripe: only an `open` session expires; any other answers 400, an unknown one 404 resource_missing. */
  private expireSession(id: string, res: ServerResponse): void {
    if (this.failWith)
      return this.send(res, this.failWith, {
        error: { type: 'api_error', message: 'Stripe fake failure' },
      });
    const found = this.sessions.get(id);
    if (!found) return this.send(res, 404, noSuchSession(id));
    if (found.status !== 'open')
      return this.send(res, 400, {
        error: {
          type: 'invalid_request_error',
          message: `Only Checkout Sessions with a status in ["open"] can be expired. This Checkout Session has a status of \`${String(found.status)}\`.`,
        },
      });
    const expired = { ...found, status: 'expired', url: null };
    this.sessions.set(id, expired);
    this.send(res, 200, expired);
  }

  /**
   * As Stripe: `items[n][id]` names an item of the subscription and `items[n][quantity]` is its new quantity.
   * `proration_behavior=always_invoice` invoices the prorated difference and charges it now (it fails while
   * `declinePayments`; a decrease is a credit and always goes through). The change applies at once, unless
   * `payment_behavior=pending_if_incomplete` and that charge failed: then the items stay as they were and the
   * new ones wait in `pending_update` (see payPendingUpdate), and only the parameters pending updates support
   * are accepted. The subscription is answered as it now is. Unknown subscriptions answer 404
   * resource_missing, unknown items and canceled subscriptions 400.
   */
  private updateSubscription(
    id: string,
    request: RecordedRequest,
    res: ServerResponse,
  ): void {
    if (this.failWith)
      return this.send(res, this.failWith, {
        error: { type: 'api_error', message: 'Stripe fake failure' },
      });
    const found = this.subscriptions.get(id);
    if (!found) return this.send(res, 404, noSuchSubscription(id));
    if (found.status === 'canceled')
      return this.send(res, 400, {
        error: {
          type: 'invalid_request_error',
          message:
            'A canceled subscription can only update its cancellation_details and metadata.',
        },
      });
    const fields = FakeStripe.fields(request);
    const items = found.items as { data: Record<string, unknown>[] };
    const data = items.data.map((item) => ({ ...item }));
    for (let index = 0; fields[`items[${index}][id]`] !== undefined; index++) {
      const item = data.find(
        (candidate) => candidate.id === fields[`items[${index}][id]`],
      );
      if (!item)
        return this.send(res, 400, {
          error: {
            type: 'invalid_request_error',
            param: `items[${index}][id]`,
            message: `No such subscription item: '${fields[`items[${index}][id]`]}'`,
          },
        });
      const quantity = fields[`items[${index}][quantity]`];
      if (quantity !== undefined) item.quantity = Number(quantity);
    }
    const pendingIfIncomplete =
      fields.payment_behavior === 'pending_if_incomplete';
    if (pendingIfIncomplete) {
      const unsupported = Object.keys(fields).find(
        (field) => !PENDING_UPDATE_PARAMS.test(field),
      );
      if (unsupported)
        return this.send(res, 400, {
          error: {
            type: 'invalid_request_error',
            param: unsupported,
            message: `When payment_behavior is pending_if_incomplete, ${unsupported} cannot be updated.`,
          },
        });
    }
    const increase = data.some(
      (item, index) =>
        Number(item.quantity ?? 1) > Number(items.data[index].quantity ?? 1),
    );
    const chargeFails =
      fields.proration_behavior === 'always_invoice' &&
      increase &&
      this.declinePayments;
    const now = Math.floor(Date.now() / 1000);
    const updated =
      pendingIfIncomplete && chargeFails
        ? {
            ...found,
            latest_invoice: `in_${randomBytes(12).toString('hex')}`,
            pending_update: {
              billing_cycle_anchor: null,
              expires_at: now + 23 * 3600,
              subscription_items: data,
              trial_end: null,
              trial_from_plan: null,
            },
          }
        : { ...found, items: { ...items, data }, pending_update: null };
    this.subscriptions.set(id, updated);
    this.send(res, 200, updated);
  }

  /**
   * As Stripe: the subscription ends now and the canceled object is answered; one it does not know, or one
   * already canceled (Stripe treats it as deleted), answers 404 resource_missing.
   */
  private cancelSubscription(id: string, res: ServerResponse): void {
    if (this.cancelFailWith)
      return this.send(res, this.cancelFailWith, {
        error: { type: 'api_error', message: 'Stripe fake failure' },
      });
    const found = this.subscriptions.get(id);
    if (!found || found.status === 'canceled')
      return this.send(res, 404, noSuchSubscription(id));
    const now = Math.floor(Date.now() / 1000);
    const canceled = {
      ...found,
      status: 'canceled',
      canceled_at: now,
      ended_at: now,
      cancel_at_period_end: false,
      cancel_at: null,
    };
    this.subscriptions.set(id, canceled);
    this.send(res, 200, canceled);
  }

  /** The form fields of a recorded request, keys as Stripe's encoding writes them (`line_items[0][quantity]`). */
  static fields(request: RecordedRequest): Record<string, string> {
    return Object.fromEntries(new URLSearchParams(request.body));
  }

  private createSession(request: RecordedRequest, res: ServerResponse): void {
    const key = request.headers['idempotency-key'];
    if (typeof key === 'string' && this.byIdempotencyKey.has(key))
      return this.send(res, 200, this.byIdempotencyKey.get(key));
    if (this.failWith)
      return this.send(res, this.failWith, {
        error: { type: 'api_error', message: 'Stripe fake failure' },
      });
    const fields = FakeStripe.fields(request);
    const now = Math.floor(Date.now() / 1000);
    const expiresAt =
      fields.expires_at === undefined
        ? now + 24 * 3600
        : Number(fields.expires_at);
    // As Stripe: from 30 minutes to 24 hours after the session's creation (a few seconds of clock skew allowed).
    if (
      !Number.isInteger(expiresAt) ||
      expiresAt < now + 30 * 60 - 5 ||
      expiresAt > now + 24 * 3600 + 5
    )
      return this.send(res, 400, {
        error: {
          type: 'invalid_request_error',
          param: 'expires_at',
          message:
            'The `expires_at` timestamp must be between 30 minutes and 24 hours from Checkout Session creation.',
        },
      });
    const id = this.newId('cs_test_');
    // As Stripe totals a session: each line item's unit amount times its quantity.
    let amountTotal = 0;
    for (
      let index = 0;
      fields[`line_items[${index}][quantity]`] !== undefined;
      index++
    )
      amountTotal +=
        Number(fields[`line_items[${index}][price_data][unit_amount]`] ?? 0) *
        Number(fields[`line_items[${index}][quantity]`]);
    const session = {
      id,
      object: 'checkout.session',
      mode: fields.mode,
      status: 'open',
      client_reference_id: fields.client_reference_id ?? null,
      amount_total: amountTotal,
      currency: fields['line_items[0][price_data][currency]'] ?? null,
      expires_at: expiresAt,
      url: `https://checkout.stripe.test/c/pay/${id}`,
    };
    this.sessions.set(id, session);
    if (typeof key === 'string') this.byIdempotencyKey.set(key, session);
    this.send(res, 200, session);
  }
}

/**
 * Paddle Billing's REST API: POST /transactions with a JSON body, answering the transaction (a `draft` until the
 * buyer enters their details at checkout) and its checkout URL, GET /transactions/{id}, PATCH /transactions/{id}
 * (`status: canceled` alone, for `ready` and `billed` transactions only), GET /subscriptions/{id},
 * PATCH /subscriptions/{id} (item quantities) and POST /subscriptions/{id}/cancel.
 */
export class FakePaddle extends FakePaymentProvider {
  /** Subscriptions Paddle knows, by id, as its API shows them (snake_case, see paddleSubscription). */
  readonly subscriptions = new Map<string, Record<string, unknown>>();
  /** Transactions by id, as Paddle shows them. */
  readonly transactions = new Map<string, Record<string, unknown>>();

  /** The buyer entered their details at checkout: the transaction has a customer and an address, and is `ready`. */
  buyerEntersDetails(id: string): void {
    const transaction = this.transactions.get(id);
    if (transaction)
      this.transactions.set(id, {
        ...transaction,
        status: 'ready',
        customer_id: 'ctm_test_1',
        address_id: 'add_test_1',
      });
  }

  protected async handle(
    req: IncomingMessage,
    res: ServerResponse,
  ): Promise<void> {
    const request = await this.record(req);
    const cancel = /^\/subscriptions\/([^/?]+)\/cancel$/.exec(request.path);
    if (request.method === 'POST' && cancel)
      return this.cancelSubscription(
        decodeURIComponent(cancel[1]),
        request,
        res,
      );
    const transaction = /^\/transactions\/([^/?]+)$/.exec(request.path);
    if (transaction && request.method === 'GET') {
      const id = decodeURIComponent(transaction[1]);
      const found = this.transactions.get(id);
      if (!found)
        return this.send(
          res,
          404,
          paddleError('not_found', 'request_error', `Entity ${id} not found`),
        );
      return this.send(res, 200, { data: found, meta: { request_id: 'r' } });
    }
    if (transaction && request.method === 'PATCH')
      return this.updateTransaction(
        decodeURIComponent(transaction[1]),
        request,
        res,
      );
    const subscription = /^\/subscriptions\/([^/?]+)$/.exec(request.path);
    if (request.method === 'GET' && subscription) {
      const id = decodeURIComponent(subscription[1]);
      const found = this.subscriptions.get(id);
      if (!found)
        return this.send(
          res,
          404,
          paddleError('not_found', 'request_error', `Entity ${id} not found`),
        );
      return this.send(res, 200, {
        data: { ...PADDLE_SUBSCRIPTION_DEFAULTS, ...found },
        meta: { request_id: 'r' },
      });
    }
    if (request.method === 'PATCH' && subscription)
      return this.updateSubscription(
        decodeURIComponent(subscription[1]),
        request,
        res,
      );
    if (request.method !== 'POST' || request.path !== '/transactions') {
      return this.send(res, 404, {
        error: {
          type: 'request_error',
          code: 'not_found',
          detail: 'not found',
        },
        meta: { request_id: 'r' },
      });
    }
    this.createTransaction(request, res);
  }

  protected isCancellation(request: RecordedRequest): boolean {
    return (
      request.method === 'POST' &&
      /^\/subscriptions\/[^/?]+\/cancel$/.test(request.path)
    );
  }

  protected isUpdate(request: RecordedRequest): boolean {
    return (
      request.method === 'PATCH' &&
      /^\/subscriptions\/[^/?]+$/.test(request.path)
    );
  }

  protected isExpiration(request: RecordedRequest): boolean {
    return (
      request.method === 'PATCH' &&
      /^\/transactions\/[^/?]+$/.test(request.path)
    );
  }

  /**
   * As Paddle: `status` may be set to `canceled` (alone: with other fields 400
   * transaction_cannot_be_modified_and_canceled) for a `ready` or `billed` transaction; from any other status
   * 400 transaction_invalid_status_change. Unknown ids answer 404 not_found. Only status changes are served.
   */
  private updateTransaction(
    id: string,
    request: RecordedRequest,
    res: ServerResponse,
  ): void {
    if (this.failWith)
      return this.send(
        res,
        this.failWith,
        paddleError('internal_error', 'api_error', 'Paddle fake failure'),
      );
    const found = this.transactions.get(id);
    if (!found)
      return this.send(
        res,
        404,
        paddleError('not_found', 'request_error', `Entity ${id} not found`),
      );
    const body = JSON.parse(request.body || '{}') as Record<string, unknown>;
    if (body.status !== 'canceled')
      return this.send(
        res,
        400,
        paddleError(
          'bad_request',
          'request_error',
          'the fake only cancels transactions',
        ),
      );
    if (Object.keys(body).length > 1)
      return this.send(
        res,
        400,
        paddleError(
          'transaction_cannot_be_modified_and_canceled',
          'request_error',
          'Cannot update transaction to canceled, along with other fields at the same time',
          'transactions',
        ),
      );
    if (found.status !== 'ready' && found.status !== 'billed')
      return this.send(
        res,
        400,
        paddleError(
          'transaction_invalid_status_change',
          'request_error',
          `Invalid attempt to change status from '${String(found.status)}' to 'canceled'`,
          'transactions',
        ),
      );
    const canceled = {
      ...found,
      status: 'canceled',
      updated_at: new Date().toISOString(),
    };
    this.transactions.set(id, canceled);
    this.send(res, 200, { data: canceled, meta: { request_id: 'r' } });
  }

  /**
   * The subscription a change or a cancellation acts on, as Paddle answers: the planned failure, 404 not_found
   * for an unknown id, 400 with `canceled` (code, detail) for a canceled one. Undefined once it has answered.
   */
  private changeableSubscription(
    id: string,
    res: ServerResponse,
    failWith: number | null,
    canceled: [code: string, detail: string],
  ): Record<string, unknown> | undefined {
    if (failWith) {
      this.send(
        res,
        failWith,
        paddleError('internal_error', 'api_error', 'Paddle fake failure'),
      );
      return undefined;
    }
    const found = this.subscriptions.get(id);
    if (!found) {
      this.send(
        res,
        404,
        paddleError('not_found', 'request_error', `Entity ${id} not found`),
      );
      return undefined;
    }
    if (found.status === 'canceled') {
      this.send(
        res,
        400,
        paddleError(canceled[0], 'request_error', canceled[1], 'subscriptions'),
      );
      return undefined;
    }
    return found;
  }
  /**
   * As Paddle: `items` replaces the subscription's items, each named by `price_id` with its `quantity` (here
   * only prices the subscription already has), and `proration_billing_mode` is required with items. A canceled
   * subscription answers 400 subscription_update_when_canceled, an unknown one 404 not_found.
   */
  private updateSubscription(
    id: string,
    request: RecordedRequest,
    res: ServerResponse,
  ): void {
    const found = this.changeableSubscription(id, res, this.failWith, [
      'subscription_update_when_canceled',
      'cannot update a canceled subscription',
    ]);
    if (!found) return;
    const body = JSON.parse(request.body || '{}') as {
      items?: { price_id?: string; quantity?: number }[];
      proration_billing_mode?: string;
    };
    const current = (found.items ?? []) as {
      price: { id: string };
      quantity: number;
    }[];
    let items = current;
    if (body.items) {
      if (!body.proration_billing_mode)
        return this.send(
          res,
          400,
          paddleError(
            'bad_request',
            'request_error',
            'proration_billing_mode is required when items are changed',
          ),
        );
      const next: typeof current = [];
      for (const wanted of body.items) {
        const item = current.find(
          (candidate) => candidate.price.id === wanted.price_id,
        );
        if (!item)
          return this.send(
            res,
            400,
            paddleError(
              'bad_request',
              'request_error',
              `price ${wanted.price_id} is not an item of the subscription`,
            ),
          );
        next.push({ ...item, quantity: wanted.quantity ?? item.quantity });
      }
      items = next;
    }
    const changed = { ...found, items, updated_at: new Date().toISOString() };
    this.subscriptions.set(id, changed);
    this.send(res, 200, {
      data: { ...PADDLE_SUBSCRIPTION_DEFAULTS, ...changed },
      meta: { request_id: 'r' },
    });
  }

  /**
   * As Paddle: `effective_from: immediately` cancels now; otherwise (Paddle's default, next_billing_period) a
   * cancellation is scheduled for the period's end. Unknown ids answer 404 not_found, canceled ones 400
   * subscription_is_canceled_action_invalid.
   */
  private cancelSubscription(
    id: string,
    request: RecordedRequest,
    res: ServerResponse,
  ): void {
    const found = this.changeableSubscription(id, res, this.cancelFailWith, [
      'subscription_is_canceled_action_invalid',
      "action can't be performed on canceled subscription",
    ]);
    if (!found) return;
    const body = (request.body ? JSON.parse(request.body) : {}) as {
      effective_from?: string;
    };
    const at = new Date().toISOString();
    const period = found.current_billing_period as
      { ends_at?: string } | null | undefined;
    const changed =
      body.effective_from === 'immediately'
        ? {
            ...found,
            status: 'canceled',
            canceled_at: at,
            scheduled_change: null,
            next_billed_at: null,
            current_billing_period: null,
            updated_at: at,
          }
        : {
            ...found,
            scheduled_change: {
              action: 'cancel',
              effective_at: period?.ends_at ?? at,
              resume_at: null,
            },
            updated_at: at,
          };
    this.subscriptions.set(id, changed);
    this.send(res, 200, {
      data: { ...PADDLE_SUBSCRIPTION_DEFAULTS, ...changed },
      meta: { request_id: 'r' },
    });
  }

  private createTransaction(
    request: RecordedRequest,
    res: ServerResponse,
  ): void {
    if (this.failWith)
      return this.send(res, this.failWith, {
        error: {
          type: 'api_error',
          code: 'internal_error',
          detail: 'Paddle fake failure',
        },
        meta: { request_id: 'r' },
      });
    const id = this.newId('txn_');
    const body = JSON.parse(request.body) as {
      custom_data?: unknown;
      collection_mode?: string;
    };
    const at = new Date().toISOString();
    // The fields of a real transaction that Paddle's SDK reads (its entities map `items` and `payments`). As
    // Paddle: without a customer and an address it is a draft, until the buyer enters them at checkout.
    const transaction = {
      id,
      status: 'draft',
      customer_id: null,
      address_id: null,
      custom_data: body.custom_data ?? null,
      currency_code: 'USD',
      origin: 'api',
      subscription_id: null,
      collection_mode: body.collection_mode ?? 'automatic',
      billing_period: null,
      items: [],
      details: null,
      payments: [],
      checkout: { url: `https://pay.paddle.test/checkout?_ptxn=${id}` },
      created_at: at,
      updated_at: at,
      billed_at: null,
    };
    this.transactions.set(id, transaction);
    this.send(res, 201, { data: transaction, meta: { request_id: 'r' } });
  }
}

/** The parameters Stripe accepts with `payment_behavior=pending_if_incomplete` (its pending updates reference). */
const PENDING_UPDATE_PARAMS =
  /^(expand(\[\d*\])?|payment_behavior|proration_behavior|proration_date|billing_cycle_anchor|trial_end|trial_from_plan|items\[\d+\]\[(id|price|quantity)\]|add_invoice_items\[.*)$/;

function noSuchSession(id: string) {
  return {
    error: {
      type: 'invalid_request_error',
      code: 'resource_missing',
      param: 'session',
      message: `No such checkout.session: '${id}'`,
    },
  };
}

function noSuchSubscription(id: string) {
  return {
    error: {
      type: 'invalid_request_error',
      code: 'resource_missing',
      param: 'id',
      message: `No such subscription: '${id}'`,
    },
  };
}

function paddleError(
  code: string,
  type: string,
  detail: string,
  group = 'shared',
) {
  return {
    error: {
      type,
      code,
      detail,
      documentation_url: `https://developer.paddle.com/errors/${group}/${code}`,
    },
    meta: { request_id: 'r' },
  };
}

/** Fields of a Paddle subscription entity the SDK reads that a test's subscription may leave out. */
const PADDLE_SUBSCRIPTION_DEFAULTS = {
  address_id: 'add_test_1',
  business_id: null,
  currency_code: 'USD',
  created_at: '2026-01-01T00:00:00.000Z',
  updated_at: '2026-01-01T00:00:00.000Z',
  started_at: '2026-01-01T00:00:00.000Z',
  first_billed_at: '2026-01-01T00:00:00.000Z',
  next_billed_at: null,
  paused_at: null,
  discount: null,
  collection_mode: 'automatic',
  billing_details: null,
  billing_cycle: { interval: 'month', frequency: 1 },
  management_urls: null,
  items: [],
  import_meta: null,
};

import { randomBytes } from 'node:crypto';
import { IncomingMessage, ServerResponse } from 'node:http';
import { LoopbackServer, readBody } from './loopback-server';

export interface RecordedRequest {
  method: string;
  path: string;
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
  /** When set, every new session gets this id (a misbehaving provider). */
  reuseId: string | null = null;
  /** Ids unique across fakes and runs: suites share one database, whose checkouts keep provider ids unique. */
  protected newId(prefix: string): string {
    if (this.reuseId) return this.reuseId;
    return `${prefix}${randomBytes(13).toString('hex')}`;
  }

  protected async record(req: IncomingMessage): Promise<RecordedRequest> {
    const recorded = { method: req.method ?? '', path: req.url ?? '', headers: req.headers, body: await readBody(req) };
    this.requests.push(recorded);
    if (this.delayMs > 0) await new Promise((done) => setTimeout(done, this.delayMs));
    return recorded;
  }

  protected send(res: ServerResponse, status: number, body: unknown): void {
    res.writeHead(status, { 'Content-Type': 'application/json' }).end(JSON.stringify(body));
  }

  creations(): RecordedRequest[] {
    return this.requests.filter((request) => request.method === 'POST');
  }
}

/**
 * Stripe's REST API as the SDK speaks it: form-encoded POST /v1/checkout/sessions (honouring Idempotency-Key
 * like Stripe: the same key answers the first response again) and GET /v1/subscriptions/:id.
 */
export class FakeStripe extends FakePaymentProvider {
  /** Subscriptions GET /v1/subscriptions/:id answers, by id. */
  readonly subscriptions = new Map<string, Record<string, unknown>>();
  private readonly byIdempotencyKey = new Map<string, unknown>();

  protected async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const request = await this.record(req);
    const path = request.path.split('?')[0];
    if (request.method === 'POST' && path === '/v1/checkout/sessions') return this.createSession(request, res);
    const subscription = /^\/v1\/subscriptions\/([^/]+)$/.exec(path);
    if (request.method === 'GET' && subscription) {
      const found = this.subscriptions.get(decodeURIComponent(subscription[1]));
      if (found) return this.send(res, 200, found);
      return this.send(res, 404, { error: { type: 'invalid_request_error', code: 'resource_missing', message: 'No such subscription' } });
    }
    this.send(res, 404, { error: { type: 'invalid_request_error', message: `Unrecognized request URL (${request.method}: ${path})` } });
  }

  /** The form fields of a recorded request, keys as Stripe's encoding writes them (`line_items[0][quantity]`). */
  static fields(request: RecordedRequest): Record<string, string> {
    return Object.fromEntries(new URLSearchParams(request.body));
  }

  private createSession(request: RecordedRequest, res: ServerResponse): void {
    const key = request.headers['idempotency-key'];
    if (typeof key === 'string' && this.byIdempotencyKey.has(key)) return this.send(res, 200, this.byIdempotencyKey.get(key));
    if (this.failWith) return this.send(res, this.failWith, { error: { type: 'api_error', message: 'Stripe fake failure' } });
    const fields = FakeStripe.fields(request);
    const id = this.newId('cs_test_');
    const session = {
      id,
      object: 'checkout.session',
      mode: fields.mode,
      status: 'open',
      client_reference_id: fields.client_reference_id ?? null,
      url: `https://checkout.stripe.test/c/pay/${id}`,
    };
    if (typeof key === 'string') this.byIdempotencyKey.set(key, session);
    this.send(res, 200, session);
  }
}

/** Paddle Billing's REST API: POST /transactions with a JSON body, answering the transaction and its checkout URL. */
export class FakePaddle extends FakePaymentProvider {
  protected async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const request = await this.record(req);
    if (request.method !== 'POST' || request.path !== '/transactions') {
      return this.send(res, 404, { error: { type: 'request_error', code: 'not_found', detail: 'not found' }, meta: { request_id: 'r' } });
    }
    if (this.failWith) return this.send(res, this.failWith, { error: { type: 'api_error', code: 'internal_error', detail: 'Paddle fake failure' }, meta: { request_id: 'r' } });
    const id = this.newId('txn_');
    const body = JSON.parse(request.body) as { custom_data?: unknown; collection_mode?: string };
    const at = new Date().toISOString();
    // The fields of a real transaction that Paddle's SDK reads (its entities map `items` and `payments`).
    this.send(res, 201, {
      data: {
        id,
        status: 'ready',
        customer_id: null,
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
      },
      meta: { request_id: 'r' },
    });
  }
}

import { randomBytes, randomUUID } from 'node:crypto';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  rmSync,
  unlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sha256Hex } from '../src/common/hashing';
import { FakeOAuthProvider } from './support/fake-oauth';
import { FakePaddle, FakeStripe } from './support/fake-payment-providers';
import {
  paddleEvent,
  paddleSubscription,
  paddleTransaction,
  stripeCheckoutSession,
  stripeEvent,
  stripeSubscription,
} from './support/billing-events';
import {
  billingEnv,
  deliver,
  inDays,
  planOf,
  providerSessionOf,
  seconds,
} from './support/billing';
import {
  PASSWORD,
  registerUser,
  registerVerifiedUser,
  sessionCookie,
  uniqueEmail,
} from './support/factories';
import { eventually } from './support/eventually';
import { sql } from './support/sql';
import { createMigratedDatabase } from './support/test-database';
import { bootTestApp, TestApp } from './support/test-app';

type User = Awaited<ReturnType<typeof registerUser>>;

/** Every table holding the account's personal data, with the column naming the owner. */
const PERSONAL_TABLES: [string, string][] = [
  ['Session', 'userId'],
  ['OAuthIdentity', 'userId'],
  ['Skill', 'ownerId'],
  ['Conversation', 'userId'],
  ['ChatRequest', 'userId'],
  ['File', 'ownerId'],
  ['PasswordResetToken', 'userId'],
  ['EmailVerificationToken', 'userId'],
  ['RecoveryCode', 'userId'],
  ['TwoFactorChallenge', 'userId'],
];

/** What the account holds, by table; rows hanging off them (messages, versions, text chunks) by the ids seen before. */
async function personalRows(
  userId: string,
  children: {
    conversationIds?: string[];
    skillIds?: string[];
    fileIds?: string[];
  } = {},
) {
  const counts: Record<string, number> = {};
  for (const [table, column] of PERSONAL_TABLES) {
    const [row] = await sql<{ n: number }>(
      `SELECT count(*)::int AS n FROM "${table}" WHERE "${column}" = $1`,
      [userId],
    );
    counts[table] = row.n;
  }
  const count = async (query: string, ids: string[] = []) =>
    (await sql<{ n: number }>(query, [ids]))[0].n;
  counts.Message = await count(
    'SELECT count(*)::int AS n FROM "Message" WHERE "conversationId" = ANY($1::uuid[])',
    children.conversationIds,
  );
  counts.SkillVersion = await count(
    'SELECT count(*)::int AS n FROM "SkillVersion" WHERE "skillId" = ANY($1::uuid[])',
    children.skillIds,
  );
  counts.FileChunk = await count(
    'SELECT count(*)::int AS n FROM "FileChunk" WHERE "fileId" = ANY($1::uuid[])',
    children.fileIds,
  );
  return counts;
}

const ids = async (query: string, userId: string) =>
  (await sql<{ id: string }>(query, [userId])).map((row) => row.id);

describe('account deletion', () => {
  const rootEmail = uniqueEmail('root');
  let t: TestApp;
  let stripe: FakeStripe;
  let paddle: FakePaddle;
  let google: FakeOAuthProvider;
  let storageDir: string;
  let root: User;

  beforeAll(async () => {
    stripe = await new FakeStripe().start();
    paddle = await new FakePaddle().start();
    google = await new FakeOAuthProvider('google').start();
    storageDir = mkdtempSync(join(tmpdir(), 'deletion-storage-'));
    t = await bootTestApp({
      ...billingEnv(stripe, paddle),
      ...google.env('GOOGLE'),
      STORAGE_DIR: storageDir,
      ADMIN_EMAILS: rootEmail,
    });
    root = await registerVerifiedUser(t.http, { email: rootEmail });
  });
  afterAll(async () => {
    await t.close();
    await Promise.all([stripe.close(), paddle.close(), google.close()]);
    rmSync(storageDir, { recursive: true, force: true });
  });
  afterEach(() => {
    stripe.cancelFailWith = null;
    paddle.cancelFailWith = null;
  });

  const deleteMe = (cookie: string, body: Record<string, unknown>) =>
    t.http.delete('/v1/auth/me').set('Cookie', cookie).send(body);
  const me = (cookie: string) =>
    t.http.get('/v1/auth/me').set('Cookie', cookie);
  const objectPath = (storageKey: string) => join(storageDir, storageKey);

  /** Fills an account with one of everything: Skill, conversation (messages, chat request, ledger line), file, tokens, a checkout. */
  async function populate(user: User) {
    await t.http
      .post('/v1/skills')
      .set('Cookie', user.cookie)
      .send({ name: 'Summarizer', instruction: 'Summarize the text.' })
      .expect(201);
    await t.http
      .post('/v1/chat')
      .set('Cookie', user.cookie)
      .send({
        model: 'local/echo',
        idempotencyKey: randomUUID(),
        messages: [{ role: 'user', content: 'my secret diary' }],
      })
      .expect(200);
    await t.http
      .post('/v1/files')
      .set('Cookie', user.cookie)
      .attach('file', Buffer.from('personal notes of the user\n'), 'notes.txt')
      .expect(201);
    await t.http
      .post('/v1/billing/checkout')
      .set('Cookie', user.cookie)
      .send({ planId: 'pro', provider: 'stripe' })
      .expect(201);
    const token = () => randomBytes(32).toString('hex');
    await sql(
      `INSERT INTO "PasswordResetToken" (id, "userId", "tokenHash", "expiresAt") VALUES (gen_random_uuid(), $1, $2, now() + interval '1 hour')`,
      [user.id, token()],
    );
    await sql(
      `INSERT INTO "EmailVerificationToken" (id, "userId", email, "tokenHash", "expiresAt") VALUES (gen_random_uuid(), $1, $2, $3, now() + interval '1 hour')`,
      [user.id, user.email, token()],
    );
    await sql(
      `INSERT INTO "RecoveryCode" (id, "userId", "codeHash") VALUES (gen_random_uuid(), $1, $2)`,
      [user.id, token()],
    );
    await sql(
      `INSERT INTO "TwoFactorChallenge" (id, "userId", "tokenHash", "expiresAt") VALUES (gen_random_uuid(), $1, $2, now() + interval '5 minutes')`,
      [user.id, token()],
    );
    // The run settles (messages, ledger line) as its stream ends; wait for it rather than for a time.
    await eventually(
      async () =>
        (
          await sql('SELECT 1 FROM "LedgerEntry" WHERE "userId" = $1', [
            user.id,
          ])
        ).length === 1,
      10_000,
    );
    return {
      conversationIds: await ids(
        'SELECT id::text FROM "Conversation" WHERE "userId" = $1',
        user.id,
      ),
      skillIds: await ids(
        'SELECT id::text FROM "Skill" WHERE "ownerId" = $1',
        user.id,
      ),
      fileIds: await ids(
        'SELECT id::text FROM "File" WHERE "ownerId" = $1',
        user.id,
      ),
      storageKeys: (
        await sql<{ storageKey: string }>(
          'SELECT "storageKey" FROM "File" WHERE "ownerId" = $1',
          [user.id],
        )
      ).map((row) => row.storageKey),
    };
  }

  const accountRow = async (id: string) =>
    (
      await sql<{
        email: string;
        passwordHash: string | null;
        role: string;
        planCode: string;
        deletedAt: Date | null;
        disabledAt: Date | null;
        emailVerifiedAt: Date | null;
      }>(
        'SELECT email, "passwordHash", role::text AS role, "planCode", "deletedAt", "disabledAt", "emailVerifiedAt" FROM "User" WHERE id = $1',
        [id],
      )
    )[0];

  const auditOf = async (id: string) =>
    (
      await t.http
        .get(`/v1/admin/audit?targetId=${id}`)
        .set('Cookie', root.cookie)
        .expect(200)
    ).body.data as Record<string, unknown>[];

  it('refuses a wrong or missing password and a missing or wrong confirmation, and changes nothing', async () => {
    const user = await registerUser(t.http);
    const held = await populate(user);
    const before = await personalRows(user.id, held);

    const wrong = await deleteMe(user.cookie, {
      password: 'not the password at all',
      confirm: 'DELETE',
    }).expect(403);
    expect(wrong.body.code).toBe('password_incorrect');
    expect(
      (await deleteMe(user.cookie, { confirm: 'DELETE' }).expect(403)).body
        .code,
    ).toBe('password_incorrect');
    for (const body of [
      { password: PASSWORD },
      { password: PASSWORD, confirm: 'delete' },
      { password: PASSWORD, confirm: 'DELETE ' },
      { password: PASSWORD, confirm: true },
    ]) {
      const refused = await deleteMe(user.cookie, body).expect(400);
      expect(refused.body.code).toBe('validation_failed');
      expect(
        refused.body.errors.map((error: { field: string }) => error.field),
      ).toEqual(['confirm']);
    }

    expect(await personalRows(user.id, held)).toEqual(before);
    const populated = [
      'Session',
      'Skill',
      'SkillVersion',
      'Conversation',
      'Message',
      'ChatRequest',
      'File',
      'PasswordResetToken',
      'EmailVerificationToken',
      'RecoveryCode',
      'TwoFactorChallenge',
    ];
    expect(populated.filter((table) => !(before[table] > 0))).toEqual([]);
    for (const key of held.storageKeys)
      expect(existsSync(objectPath(key))).toBe(true);
    expect((await me(user.cookie).expect(200)).body.email).toBe(user.email);
    expect((await accountRow(user.id)).deletedAt).toBeNull();
  });

  it('erases the personal data with the password, keeps the ledger and checkouts on a tombstone without email, and frees the email', async () => {
    const user = await registerUser(t.http);
    const held = await populate(user);
    const [ledgerBefore] = await sql<{ n: number }>(
      'SELECT count(*)::int AS n FROM "LedgerEntry" WHERE "userId" = $1',
      [user.id],
    );

    const res = await deleteMe(user.cookie, {
      password: PASSWORD,
      confirm: 'DELETE',
    }).expect(204);
    const cleared = (
      (res.headers['set-cookie'] as unknown as string[] | undefined) ?? []
    ).find((cookie) => cookie.startsWith('sid='));
    expect(cleared).toMatch(/^sid=;.*Expires=Thu, 01 Jan 1970/);
    expect((await me(user.cookie).expect(401)).body.code).toBe(
      'unauthenticated',
    );

    expect(
      Object.entries(await personalRows(user.id, held)).filter(
        ([, n]) => n > 0,
      ),
    ).toEqual([]);
    for (const key of held.storageKeys)
      expect(existsSync(objectPath(key))).toBe(false);

    const [kept] = await sql<{ ledger: number; checkouts: number }>(
      'SELECT (SELECT count(*)::int FROM "LedgerEntry" WHERE "userId" = $1) AS ledger, (SELECT count(*)::int FROM "Checkout" WHERE "userId" = $1) AS checkouts',
      [user.id],
    );
    expect(kept).toEqual({ ledger: ledgerBefore.n, checkouts: 1 });
    expect(await accountRow(user.id)).toEqual({
      email: `deleted-${user.id}@deleted.invalid`,
      passwordHash: null,
      role: 'user',
      planCode: 'free',
      deletedAt: expect.any(Date),
      disabledAt: expect.any(Date),
      emailVerifiedAt: null,
    });
    expect(
      await sql('SELECT 1 FROM "User" WHERE email = $1', [user.email]),
    ).toEqual([]);

    const [entry] = await auditOf(user.id);
    expect(entry).toMatchObject({
      admin: null,
      action: 'user.delete',
      targetType: 'user',
      targetId: user.id,
      after: expect.objectContaining({
        deleted: true,
        files: 1,
        conversations: 1,
      }),
    });
    expect(JSON.stringify(entry)).not.toContain(user.email);

    await t.http
      .post('/v1/auth/login')
      .send({ email: user.email, password: PASSWORD })
      .expect(401);
    const again = await t.http
      .post('/v1/auth/register')
      .send({ email: user.email, password: PASSWORD })
      .expect(201);
    expect(again.body.id).not.toBe(user.id);
    // The session of the old account is gone for good: even a retry of the deletion is refused.
    await deleteMe(user.cookie, {
      password: PASSWORD,
      confirm: 'DELETE',
    }).expect(401);
  });

  describe('subscriptions', () => {
    async function startCheckout(user: User, provider: 'stripe' | 'paddle') {
      const res = await t.http
        .post('/v1/billing/checkout')
        .set('Cookie', user.cookie)
        .send({ planId: 'pro', provider })
        .expect(201);
      return {
        checkoutId: res.body.checkoutId as string,
        sessionId: await providerSessionOf(res.body.checkoutId),
      };
    }

    const subscriptionRow = async (
      provider: string,
      providerSubscriptionId: string,
    ) =>
      (
        await sql<{ userId: string; status: string; canceledAt: Date | null }>(
          'SELECT "userId"::text AS "userId", status::text AS status, "canceledAt" FROM "Subscription" WHERE provider = $1::"PaymentProvider" AND "providerSubscriptionId" = $2',
          [provider, providerSubscriptionId],
        )
      )[0];

    it('cancels an active Stripe subscription at Stripe; an unreachable Stripe answers 503 and erases nothing, a retry completes', async () => {
      const user = await registerUser(t.http);
      const { checkoutId, sessionId } = await startCheckout(user, 'stripe');
      const subscriptionId = `sub_${randomUUID().replace(/-/g, '').slice(0, 20)}`;
      const periodEnd = seconds(inDays(30));
      stripe.subscriptions.set(
        subscriptionId,
        stripeSubscription({
          id: subscriptionId,
          status: 'active',
          periodEnd,
          checkoutId,
          userId: user.id,
        }),
      );
      await deliver(
        t,
        'stripe',
        stripeEvent(
          'checkout.session.completed',
          stripeCheckoutSession(sessionId, subscriptionId, checkoutId),
        ),
      ).expect(200);
      expect(await planOf(user.id)).toBe('pro');
      const cancellationsBefore = stripe.cancellations().length;

      stripe.cancelFailWith = 500;
      const refused = await deleteMe(user.cookie, {
        password: PASSWORD,
        confirm: 'DELETE',
      }).expect(503);
      expect(refused.body.code).toBe('payment_provider_unavailable');
      expect(stripe.cancellations().length).toBeGreaterThan(
        cancellationsBefore,
      );
      // Still signed in and still on the plan (read from the database: a cached session may lag the webhook's change).
      await me(user.cookie).expect(200);
      expect(await planOf(user.id)).toBe('pro');
      expect(await subscriptionRow('stripe', subscriptionId)).toMatchObject({
        status: 'active',
        canceledAt: null,
      });
      expect(stripe.subscriptions.get(subscriptionId)?.status).toBe('active');
      expect((await accountRow(user.id)).deletedAt).toBeNull();

      stripe.cancelFailWith = null;
      await deleteMe(user.cookie, {
        password: PASSWORD,
        confirm: 'DELETE',
      }).expect(204);
      const cancel = stripe.cancellations().at(-1)!;
      expect(cancel).toMatchObject({
        method: 'DELETE',
        path: `/v1/subscriptions/${subscriptionId}`,
      });
      expect(cancel.headers.authorization).toBe('Bearer sk_test_fake_key');
      expect(stripe.subscriptions.get(subscriptionId)?.status).toBe('canceled');
      expect(await subscriptionRow('stripe', subscriptionId)).toEqual({
        userId: user.id,
        status: 'canceled',
        canceledAt: expect.any(Date),
      });
      const [checkout] = await sql<{ status: string }>(
        'SELECT status::text FROM "Checkout" WHERE id = $1',
        [checkoutId],
      );
      expect(checkout.status).toBe('completed');

      // Stripe's own events of the cancellation arrive later: acknowledged, nothing comes back to life.
      const ended = stripeSubscription({
        id: subscriptionId,
        status: 'canceled',
        periodEnd,
        checkoutId,
        canceledAt: seconds(new Date()),
      });
      await deliver(
        t,
        'stripe',
        stripeEvent('customer.subscription.deleted', ended, {
          created: seconds(new Date()) + 1,
        }),
      ).expect(200);
      const revived = stripeSubscription({
        id: subscriptionId,
        status: 'active',
        periodEnd,
        checkoutId,
      });
      await deliver(
        t,
        'stripe',
        stripeEvent('customer.subscription.updated', revived, {
          created: seconds(new Date()) + 2,
        }),
      ).expect(200);
      expect((await subscriptionRow('stripe', subscriptionId)).status).toBe(
        'canceled',
      );
      expect(await planOf(user.id)).toBe('free');
    });

    it('cancels at once a subscription bought through a checkout left open by an erased account', async () => {
      const user = await registerUser(t.http);
      const { checkoutId, sessionId } = await startCheckout(user, 'stripe');
      await deleteMe(user.cookie, {
        password: PASSWORD,
        confirm: 'DELETE',
      }).expect(204);
      // The buyer pays in the tab still open: Stripe creates the subscription and reports the checkout.
      const subscriptionId = `sub_${randomUUID().replace(/-/g, '').slice(0, 20)}`;
      stripe.subscriptions.set(
        subscriptionId,
        stripeSubscription({
          id: subscriptionId,
          status: 'active',
          periodEnd: seconds(inDays(30)),
          checkoutId,
          userId: user.id,
        }),
      );
      stripe.cancelFailWith = 500;
      const completed = stripeEvent(
        'checkout.session.completed',
        stripeCheckoutSession(sessionId, subscriptionId, checkoutId),
      );
      // Stripe cannot be reached: nothing is recorded, so Stripe delivers the event again.
      await deliver(t, 'stripe', completed).expect(503);
      expect(await subscriptionRow('stripe', subscriptionId)).toBeUndefined();
      stripe.cancelFailWith = null;
      await deliver(t, 'stripe', completed).expect(200);
      expect(stripe.cancellations().at(-1)).toMatchObject({
        method: 'DELETE',
        path: `/v1/subscriptions/${subscriptionId}`,
      });
      expect(stripe.subscriptions.get(subscriptionId)?.status).toBe('canceled');
      expect(await subscriptionRow('stripe', subscriptionId)).toMatchObject({
        userId: user.id,
        status: 'canceled',
      });
      expect(await planOf(user.id)).toBe('free');
    });

    it('cancels a Paddle subscription immediately at Paddle, and counts one the provider no longer knows as done', async () => {
      const user = await registerUser(t.http);
      const { checkoutId, sessionId } = await startCheckout(user, 'paddle');
      const subscriptionId = `sub_${randomUUID().replace(/-/g, '').slice(0, 26)}`;
      const periodEnd = inDays(30);
      paddle.subscriptions.set(
        subscriptionId,
        paddleSubscription({
          id: subscriptionId,
          status: 'active',
          periodEnd,
          checkoutId,
          transactionId: sessionId,
        }),
      );
      await deliver(
        t,
        'paddle',
        paddleEvent(
          'transaction.completed',
          paddleTransaction({
            id: sessionId,
            subscriptionId,
            checkoutId,
            periodEnd,
          }),
        ),
      ).expect(200);
      expect(await planOf(user.id)).toBe('pro');
      // A second, past-due subscription that Stripe has already removed (it answers 404 resource_missing).
      const goneAtStripe = `sub_gone_${randomUUID().replace(/-/g, '').slice(0, 12)}`;
      await sql(
        `INSERT INTO "Subscription" (id, "userId", "planCode", provider, "providerSubscriptionId", status, "lastEventAt", "updatedAt")
         VALUES (gen_random_uuid(), $1, 'pro', 'stripe', $2, 'past_due', now(), now())`,
        [user.id, goneAtStripe],
      );

      await deleteMe(user.cookie, {
        password: PASSWORD,
        confirm: 'DELETE',
      }).expect(204);
      const [cancel] = paddle
        .cancellations()
        .filter(
          (request) =>
            request.path === `/subscriptions/${subscriptionId}/cancel`,
        );
      expect(cancel.method).toBe('POST');
      expect(JSON.parse(cancel.body)).toEqual({
        effective_from: 'immediately',
      });
      expect(cancel.headers.authorization).toBe('bearer pdl_sdbx_apikey_fake');
      expect(cancel.headers['content-type']).toBe('application/json');
      expect(paddle.subscriptions.get(subscriptionId)).toMatchObject({
        status: 'canceled',
        scheduled_change: null,
      });
      expect(
        stripe
          .cancellations()
          .some(
            (request) => request.path === `/v1/subscriptions/${goneAtStripe}`,
          ),
      ).toBe(true);
      expect(await subscriptionRow('paddle', subscriptionId)).toEqual({
        userId: user.id,
        status: 'canceled',
        canceledAt: expect.any(Date),
      });
      expect(await subscriptionRow('stripe', goneAtStripe)).toMatchObject({
        status: 'canceled',
      });

      const canceled = paddleSubscription({
        id: subscriptionId,
        status: 'canceled',
        periodEnd,
        checkoutId,
        canceledAt: new Date(),
      });
      await deliver(
        t,
        'paddle',
        paddleEvent('subscription.canceled', canceled, {
          occurredAt: new Date(Date.now() + 1000),
        }),
      ).expect(200);
      expect((await subscriptionRow('paddle', subscriptionId)).status).toBe(
        'canceled',
      );
    });

    it('treats a subscription Paddle already canceled as done, and refuses with 503 when Paddle fails', async () => {
      const user = await registerUser(t.http);
      const { checkoutId, sessionId } = await startCheckout(user, 'paddle');
      const subscriptionId = `sub_${randomUUID().replace(/-/g, '').slice(0, 26)}`;
      const periodEnd = inDays(30);
      paddle.subscriptions.set(
        subscriptionId,
        paddleSubscription({
          id: subscriptionId,
          status: 'active',
          periodEnd,
          checkoutId,
          transactionId: sessionId,
        }),
      );
      await deliver(
        t,
        'paddle',
        paddleEvent(
          'transaction.completed',
          paddleTransaction({
            id: sessionId,
            subscriptionId,
            checkoutId,
            periodEnd,
          }),
        ),
      ).expect(200);

      paddle.cancelFailWith = 503;
      expect(
        (
          await deleteMe(user.cookie, {
            password: PASSWORD,
            confirm: 'DELETE',
          }).expect(503)
        ).body.code,
      ).toBe('payment_provider_unavailable');
      expect((await me(user.cookie).expect(200)).body.id).toBe(user.id);
      paddle.cancelFailWith = null;

      // Canceled at Paddle (its webhook not delivered yet): Paddle answers 400 subscription_is_canceled_action_invalid.
      paddle.subscriptions.set(subscriptionId, {
        ...paddle.subscriptions.get(subscriptionId)!,
        status: 'canceled',
      });
      const before = paddle.cancellations().length;
      await deleteMe(user.cookie, {
        password: PASSWORD,
        confirm: 'DELETE',
      }).expect(204);
      expect(paddle.cancellations().length).toBe(before + 1);
      expect(await subscriptionRow('paddle', subscriptionId)).toMatchObject({
        status: 'canceled',
      });
      expect((await accountRow(user.id)).deletedAt).toEqual(expect.any(Date));
    });
  });

  it('answers 503 when a file object cannot be removed, erases nothing, and a retry completes (a missing object is fine)', async () => {
    const user = await registerUser(t.http);
    await t.http
      .post('/v1/files')
      .set('Cookie', user.cookie)
      .attach('file', Buffer.from('first file\n'), 'a.txt')
      .expect(201);
    await t.http
      .post('/v1/files')
      .set('Cookie', user.cookie)
      .attach('file', Buffer.from('second file\n'), 'b.txt')
      .expect(201);
    const [stuck, missing] = (
      await sql<{ storageKey: string }>(
        'SELECT "storageKey" FROM "File" WHERE "ownerId" = $1 ORDER BY "createdAt"',
        [user.id],
      )
    ).map((row) => row.storageKey);
    // A directory where the object was: the storage cannot unlink it (a real failure, not a missing object).
    unlinkSync(objectPath(stuck));
    mkdirSync(objectPath(stuck));
    writeFileSync(join(objectPath(stuck), 'inside'), 'x');
    unlinkSync(objectPath(missing));

    const refused = await deleteMe(user.cookie, {
      password: PASSWORD,
      confirm: 'DELETE',
    }).expect(503);
    expect(refused.body.code).toBe('storage_unavailable');
    expect((await personalRows(user.id)).File).toBe(2);
    expect((await me(user.cookie).expect(200)).body.id).toBe(user.id);

    rmSync(objectPath(stuck), { recursive: true });
    await deleteMe(user.cookie, {
      password: PASSWORD,
      confirm: 'DELETE',
    }).expect(204);
    expect((await personalRows(user.id)).File).toBe(0);
  });

  describe('an account without a password (Google only)', () => {
    async function googleSignIn(account: {
      id: string;
      email: string;
      verified: boolean;
    }) {
      const begin = await t.http.get('/v1/auth/google').expect(302);
      const stateCookie = (
        (begin.headers['set-cookie'] as unknown as string[]) ?? []
      )
        .find((cookie) => cookie.startsWith('oauth_google='))!
        .split(';')[0];
      const location = begin.headers.location;
      const code = google.approve(location, account);
      const state = new URL(location).searchParams.get('state')!;
      const callback = await t.http
        .get('/v1/auth/google/callback')
        .query({ code, state })
        .set('Cookie', stateCookie)
        .expect(302);
      return sessionCookie(callback);
    }

    it('deletes with a sign-in of the last 10 minutes, and refuses an older one', async () => {
      const account = {
        id: String(randomBytes(4).readUInt32BE()),
        email: uniqueEmail('google'),
        verified: true,
      };
      const stale = await googleSignIn(account);
      // Signed in 11 minutes ago; moved before the session's first use, so no instance has it cached yet.
      const moved = await sql(
        `UPDATE "Session" SET "createdAt" = now() - interval '11 minutes' WHERE "tokenHash" = $1 RETURNING id`,
        [sha256Hex(stale.split('=')[1])],
      );
      expect(moved).toHaveLength(1);
      const refused = await deleteMe(stale, { confirm: 'DELETE' }).expect(403);
      expect(refused.body.code).toBe('reauthentication_required');
      expect(refused.body.detail).toMatch(/sign in again.*10 minutes/i);
      const { id } = (await me(stale).expect(200)).body as { id: string };
      expect((await personalRows(id)).OAuthIdentity).toBe(1);

      const fresh = await googleSignIn(account);
      expect((await me(fresh).expect(200)).body.id).toBe(id);
      await deleteMe(fresh, { confirm: 'DELETE' }).expect(204);
      expect(
        Object.entries(await personalRows(id)).filter(([, n]) => n > 0),
      ).toEqual([]);
      await me(stale).expect(401);

      // The identity went with the account: the same Google account signs up afresh.
      const anew = await googleSignIn(account);
      const renewed = (await me(anew).expect(200)).body as {
        id: string;
        email: string;
      };
      expect(renewed).toMatchObject({ email: account.email });
      expect(renewed.id).not.toBe(id);
    });
  });

  describe('by an admin', () => {
    it('erases an account with a reason, audited; admin changes of the tombstone answer 409; others get 403 and 404', async () => {
      const user = await registerUser(t.http);
      const held = await populate(user);
      const bystander = await registerUser(t.http);

      const forbidden = await t.http
        .delete(`/v1/admin/users/${user.id}`)
        .set('Cookie', bystander.cookie)
        .send({ reason: 'x' })
        .expect(403);
      expect(forbidden.body.code).toBe('forbidden');
      await t.http
        .delete(`/v1/admin/users/${user.id}`)
        .set('Cookie', root.cookie)
        .send({})
        .expect(400);
      expect((await me(user.cookie).expect(200)).body.id).toBe(user.id);

      await t.http
        .delete(`/v1/admin/users/${user.id}`)
        .set('Cookie', root.cookie)
        .send({ reason: 'Erasure request by mail, ticket #7' })
        .expect(204);
      await me(user.cookie).expect(401);
      expect(
        Object.entries(await personalRows(user.id, held)).filter(
          ([, n]) => n > 0,
        ),
      ).toEqual([]);
      for (const key of held.storageKeys)
        expect(existsSync(objectPath(key))).toBe(false);

      const [entry] = await auditOf(user.id);
      expect(entry).toMatchObject({
        admin: { id: root.id, email: rootEmail },
        action: 'user.delete',
        targetId: user.id,
        reason: 'Erasure request by mail, ticket #7',
      });
      expect(JSON.stringify([entry.before, entry.after])).not.toContain(
        user.email,
      );

      const detail = await t.http
        .get(`/v1/admin/users/${user.id}`)
        .set('Cookie', root.cookie)
        .expect(200);
      expect(detail.body).toMatchObject({
        email: `deleted-${user.id}@deleted.invalid`,
        deletedAt: expect.any(String),
        sessions: [],
      });
      expect(
        (
          await t.http
            .get(`/v1/admin/users/${bystander.id}`)
            .set('Cookie', root.cookie)
            .expect(200)
        ).body.deletedAt,
      ).toBeNull();

      const changes: [
        string,
        'put' | 'post' | 'delete',
        Record<string, unknown>,
      ][] = [
        [
          `/v1/admin/users/${user.id}/plan`,
          'put',
          { planCode: 'team', reason: 'x' },
        ],
        [
          `/v1/admin/users/${user.id}/role`,
          'put',
          { role: 'admin', reason: 'x' },
        ],
        [`/v1/admin/users/${user.id}/disable`, 'post', { reason: 'x' }],
        [`/v1/admin/users/${user.id}/enable`, 'post', { reason: 'x' }],
        [
          `/v1/admin/users/${user.id}/credits`,
          'post',
          { credits: 5, reason: 'x' },
        ],
        [`/v1/admin/users/${user.id}`, 'delete', { reason: 'again' }],
      ];
      for (const [path, method, body] of changes) {
        const res = await t.http[method](path)
          .set('Cookie', root.cookie)
          .send(body);
        expect({
          path,
          method,
          status: res.status,
          code: res.body.code,
        }).toEqual({ path, method, status: 409, code: 'account_deleted' });
      }
      expect(await accountRow(user.id)).toMatchObject({
        role: 'user',
        planCode: 'free',
      });

      await t.http
        .delete(`/v1/admin/users/${randomUUID()}`)
        .set('Cookie', root.cookie)
        .send({ reason: 'x' })
        .expect(404);
      await t.http
        .delete('/v1/admin/users/not-a-uuid')
        .set('Cookie', root.cookie)
        .send({ reason: 'x' })
        .expect(404);
    });

    it('refuses to delete the last active admin, by either route', async () => {
      // A database where these two are the only admins.
      const database = await createMigratedDatabase('chat_deletion_admins');
      const app = await bootTestApp({
        DATABASE_URL: database.url,
        STORAGE_DIR: storageDir,
      });
      try {
        const a = await registerUser(app.http);
        const b = await registerUser(app.http);
        await sql(
          `UPDATE "User" SET role = 'admin' WHERE id = ANY($1::uuid[])`,
          [[a.id, b.id]],
          database.url,
        );
        await app.http
          .delete(`/v1/admin/users/${b.id}`)
          .set('Cookie', a.cookie)
          .send({ reason: 'Left the company' })
          .expect(204);

        const self = await app.http
          .delete('/v1/auth/me')
          .set('Cookie', a.cookie)
          .send({ password: PASSWORD, confirm: 'DELETE' })
          .expect(409);
        expect(self.body.code).toBe('last_admin');
        const viaAdmin = await app.http
          .delete(`/v1/admin/users/${a.id}`)
          .set('Cookie', a.cookie)
          .send({ reason: 'x' })
          .expect(409);
        expect(viaAdmin.body.code).toBe('last_admin');
        expect(
          (
            await app.http
              .get('/v1/auth/me')
              .set('Cookie', a.cookie)
              .expect(200)
          ).body.role,
        ).toBe('admin');
        const [{ admins }] = await sql<{ admins: number }>(
          `SELECT count(*)::int AS admins FROM "User" WHERE role = 'admin' AND "deletedAt" IS NULL`,
          [],
          database.url,
        );
        expect(admins).toBe(1);
      } finally {
        await app.close();
        await database.drop();
      }
    });
  });
});

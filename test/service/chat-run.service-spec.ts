import { randomUUID } from 'node:crypto';
import { TestingModule } from '@nestjs/testing';
import { AppError } from '../../src/common/errors/app-error';
import { ChatPipelineService } from '../../src/chat/chat-pipeline.service';
import { ChatRequestsRepository } from '../../src/chat/chat-requests.repository';
import { ChatStream } from '../../src/chat/chat-stream';
import { RunStops } from '../../src/chat/stop/run-stops';
import { ChatTurn } from '../../src/chat/run/chat-turn';
import { eventually } from '../support/eventually';
import { ScriptedProvider } from './scripted-provider';
import { bootServiceModule, ServiceModule } from './service-module';

const MODEL = 'openai/gpt-4o-mini';

/**
 * The chat run's branches at the service level: the pipeline and the services it is made of, built by Nest's
 * testing module from the real AppModule (no HTTP), on a database of their own, with a scripted provider in
 * place of the model. What the e2e tier checks through HTTP, here in a few seconds per branch.
 */
describe('a chat run, service by service', () => {
  const provider = new ScriptedProvider('openai');
  let services: ServiceModule;
  let moduleRef: TestingModule;
  let pipeline: ChatPipelineService;
  let db: ServiceModule['db'];
  let newUser: ServiceModule['newUser'];

  beforeAll(async () => {
    services = await bootServiceModule('chat_run_service', provider, {
      CHAT_LEASE_MS: '60000',
    });
    ({ moduleRef, db, newUser } = services);
    pipeline = moduleRef.get(ChatPipelineService);
  });
  afterAll(() => services.close());
  beforeEach(() => provider.reset());

  const turn = (content: string, key = randomUUID()): ChatTurn => ({
    model: MODEL,
    idempotencyKey: key,
    fingerprint: `fingerprint:${content}`,
    messages: [{ role: 'user', content }],
  });

  /** The whole answer as a client would read it: its text and how it ended. */
  async function read(stream: ChatStream) {
    await stream.answer.whenEnded(20_000);
    return { text: stream.answer.textSoFar(), outcome: stream.answer.ended };
  }

  const ledgerOf = (userId: string) =>
    db<{ status: string; credits: number; outputTokens: number }>(
      `SELECT status::text, credits, "outputTokens" FROM "LedgerEntry" WHERE "userId" = $1`,
      [userId],
    );
  const usageOf = async (userId: string) =>
    (
      await db<{ used: number; reserved: number }>(
        `SELECT COALESCE(SUM(used), 0)::int AS used, COALESCE(SUM(reserved), 0)::int AS reserved
           FROM "DailyUsage" WHERE "userId" = $1`,
        [userId],
      )
    )[0];
  const requestOf = async (userId: string) =>
    (
      await db<{
        status: string;
        errorCode: string | null;
        responseBody: string | null;
      }>(
        `SELECT status::text, "errorCode", "responseBody" FROM "ChatRequest" WHERE "userId" = $1`,
        [userId],
      )
    )[0];

  it('a new run streams, settles once (ledger, usage, messages) and releases what it reserved', async () => {
    const user = await newUser();
    provider.script = { words: ['Hello', ' there'] };
    const stream = await pipeline.start(user, turn('hi'));
    expect(stream.replayed).toBe(false);
    expect(await read(stream)).toEqual({
      text: 'Hello there',
      outcome: expect.objectContaining({ status: 'completed' }),
    });
    expect(provider.calls).toBe(1);
    expect(await ledgerOf(user.id)).toEqual([
      expect.objectContaining({ status: 'completed', outputTokens: 2 }),
    ]);
    expect(await usageOf(user.id)).toEqual({
      used: (await ledgerOf(user.id))[0].credits,
      reserved: 0,
    });
    const messages = await db(
      `SELECT role::text, content FROM "Message" WHERE "conversationId" = $1 ORDER BY seq`,
      [stream.conversationId],
    );
    expect(messages).toEqual([
      { role: 'user', content: 'hi' },
      { role: 'assistant', content: 'Hello there' },
    ]);
  });

  it('a retry of a finished run is replayed from the database: no model call, no charge', async () => {
    const user = await newUser();
    const first = turn('again');
    await read(await pipeline.start(user, first));
    const replay = await pipeline.start(user, first);
    expect(replay.replayed).toBe(true);
    expect((await read(replay)).text).toBe('Hello world');
    expect(provider.calls).toBe(1);
    expect(await ledgerOf(user.id)).toHaveLength(1);
  });

  it('a retry of a running run joins it from the first byte; the model is called once', async () => {
    const user = await newUser();
    const release = provider.holdBefore(1);
    const first = turn('join me');
    const original = await pipeline.start(user, first);
    const joined = await pipeline.start(user, first);
    expect(joined.replayed).toBe(true);
    release();
    expect((await read(joined)).text).toBe('Hello world');
    expect((await read(original)).text).toBe('Hello world');
    expect(provider.calls).toBe(1);
  });

  it('a run over the quota is refused before anything is stored, and its key stays unused', async () => {
    const user = await newUser('free');
    await db(
      `INSERT INTO "DailyUsage" ("userId", day, used, reserved) VALUES ($1, (now() AT TIME ZONE 'UTC')::date, 50, 0)`,
      [user.id],
    );
    const refused = turn('too much');
    await expect(pipeline.start(user, refused)).rejects.toMatchObject({
      code: 'quota_exceeded',
    });
    expect(await requestOf(user.id)).toBeUndefined();
    expect(provider.calls).toBe(0);
    await db(`UPDATE "DailyUsage" SET used = 0 WHERE "userId" = $1`, [user.id]);
    expect((await read(await pipeline.start(user, refused))).text).toBe(
      'Hello world',
    );
  });

  it('a provider failing mid-stream ends the answer as failed and bills only what was delivered', async () => {
    const user = await newUser();
    provider.script = { words: ['half', ' way', ' never'], failAfter: 2 };
    const { text, outcome } = await read(
      await pipeline.start(user, turn('break')),
    );
    expect(text).toBe('half way');
    expect(outcome).toEqual(
      expect.objectContaining({
        status: 'failed',
        errorCode: 'provider_error',
      }),
    );
    expect(await ledgerOf(user.id)).toEqual([
      expect.objectContaining({ status: 'partial', outputTokens: 2 }),
    ]);
    expect((await usageOf(user.id)).reserved).toBe(0);
  });

  it('a settlement that meets a database outage is tried again until it lands', async () => {
    const user = await newUser();
    const repository = moduleRef.get(ChatRequestsRepository);
    const settle = jest.spyOn(repository, 'settleMany');
    const outage = Object.assign(
      new Error('connect ECONNREFUSED 127.0.0.1:5432'),
      {
        code: 'ECONNREFUSED',
        syscall: 'connect',
      },
    );
    settle.mockRejectedValueOnce(outage).mockRejectedValueOnce(outage);
    try {
      const { outcome } = await read(
        await pipeline.start(user, turn('outage')),
      );
      expect(outcome).toEqual(expect.objectContaining({ status: 'completed' }));
      expect(settle).toHaveBeenCalledTimes(3);
      expect(await ledgerOf(user.id)).toHaveLength(1);
      expect((await usageOf(user.id)).reserved).toBe(0);
    } finally {
      settle.mockRestore();
    }
  });

  it('a run swept by another instance keeps the text it delivered, fails, and is charged nothing', async () => {
    const user = await newUser();
    const release = provider.holdBefore(1);
    const stream = await pipeline.start(user, turn('swept'));
    await db(
      `UPDATE "ChatRequest" SET "leaseExpiresAt" = now() - interval '1 second' WHERE "userId" = $1`,
      [user.id],
    );
    // As another instance's sweeper: this one's own runs are not excluded there.
    const swept = await moduleRef
      .get(ChatRequestsRepository)
      .failExpiredRuns([]);
    expect(swept).toHaveLength(1);
    release();
    const { text, outcome } = await read(stream);
    expect(text).toBe('Hello world');
    expect(outcome).toEqual({
      status: 'failed',
      errorCode: 'generation_interrupted',
    });
    await eventually(
      async () => (await requestOf(user.id))?.responseBody === 'Hello world',
      10_000,
    );
    expect(await ledgerOf(user.id)).toEqual([]);
    expect(await usageOf(user.id)).toEqual({ used: 0, reserved: 0 });
  });

  it('a stopped run ends cleanly with the text so far, and only that is billed', async () => {
    const user = await newUser();
    provider.script = { words: ['kept', ' then', ' never'] };
    const release = provider.holdBefore(2);
    const stream = await pipeline.start(user, turn('stop me'));
    await eventually(() => stream.answer.textSoFar() === 'kept then', 10_000);
    await moduleRef.get(RunStops).stop([stream.runId]);
    release();
    const { text, outcome } = await read(stream);
    expect(text).toBe('kept then');
    expect(outcome).toEqual(expect.objectContaining({ status: 'stopped' }));
    expect(await ledgerOf(user.id)).toEqual([
      expect.objectContaining({ status: 'partial', outputTokens: 2 }),
    ]);
    expect(await requestOf(user.id)).toEqual(
      expect.objectContaining({ status: 'stopped' }),
    );
  });

  it('refuses a key reused for another request (422) without touching the earlier one', async () => {
    const user = await newUser();
    const key = randomUUID();
    await read(await pipeline.start(user, turn('one', key)));
    const error = await pipeline
      .start(user, turn('two', key))
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(AppError);
    expect(error).toMatchObject({ code: 'idempotency_key_reused' });
    expect(provider.calls).toBe(1);
  });

  it('stores an answer whose stream left half a surrogate pair, as PostgreSQL stores such text (U+FFFD)', async () => {
    const user = await newUser();
    provider.script = { words: ['broken \uD83D', ' end'] };
    const stream = await pipeline.start(user, turn('surrogate'));
    const { outcome } = await read(stream);
    expect(outcome).toEqual(expect.objectContaining({ status: 'completed' }));
    expect(await requestOf(user.id)).toEqual(
      expect.objectContaining({
        status: 'completed',
        responseBody: 'broken \uFFFD end',
      }),
    );
    expect(await ledgerOf(user.id)).toHaveLength(1);
  });
});

import { randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { listen, parseEvents, post } from './support/chat-client';
import {
  AZURE_KEY,
  ENTRA_CLIENT_ID,
  ENTRA_CLIENT_SECRET,
  FakeAzure,
  TENANT,
} from './support/fake-azure';
import { FakeBedrockServer } from './support/fake-bedrock';
import { FakeGeminiServer } from './support/fake-gemini';
import { registerUser } from './support/factories';
import { sql } from './support/sql';
import { bootTestApp, TestApp } from './support/test-app';
import { createMigratedDatabase } from './support/test-database';

const GEMINI_KEYS = ['gemini-key-0123456789abcdef'];
const AWS = {
  accessKeyId: 'AKIAKINDS0123456789',
  secretAccessKey: 'aws-secret-0123456789abcdef0123456789',
};
const EVENTS = { Accept: 'text/event-stream' };
/** One credit per token each way, cached input free: the credits show which tokens were cached. */
const PRICING = {
  per1kInputTokens: 1000,
  per1kCachedInputTokens: 0,
  per1kOutputTokens: 1000,
};

/**
 * Every kind of endpoint, declared in a catalog and reached through POST /v1/chat as a user would: the
 * wiring from the catalog to each adapter (base URLs, keys, Entra, SigV4), and the cached input tokens each
 * provider reports, priced apart, in the SSE usage, the ledger and the conversation.
 */
describe('endpoints of every kind through the chat', () => {
  let database: { url: string; drop: () => Promise<void> };
  let gemini: FakeGeminiServer;
  let azure: FakeAzure;
  let bedrock: FakeBedrockServer;
  let t: TestApp;
  let base: string;
  let cookie: string;
  let userId: string;

  beforeAll(async () => {
    database = await createMigratedDatabase('chat_provider_kinds');
    gemini = await new FakeGeminiServer(GEMINI_KEYS).start();
    azure = await new FakeAzure().start();
    bedrock = await new FakeBedrockServer('us-east-1', AWS).start();
    const shipped = JSON.parse(readFileSync('config/catalog.json', 'utf8')) as {
      plans: { code: string; models: string[] }[];
    };
    const model = (id: string, endpoint: string, upstreamModel: string) => ({
      id,
      name: id,
      endpoint,
      upstreamModel,
      pricing: PRICING,
      maxOutputTokens: 100,
      contextWindow: 8_000,
    });
    const models = [
      model('kinds/gemini', 'gemini', 'gemini-2.5-flash'),
      model('kinds/azure', 'azure', 'gpt-4o-mini'),
      model('kinds/azure-entra', 'azure-entra', 'gpt-4o-mini'),
      model('kinds/bedrock', 'aws', 'anthropic.claude-3-5-haiku-20241022-v1:0'),
    ];
    const catalog = {
      ...shipped,
      endpoints: {
        gemini: {
          kind: 'gemini',
          baseUrl: '${KINDS_GEMINI_URL}/v1beta',
          apiKeyEnv: 'KINDS_GEMINI_KEY',
        },
        azure: {
          kind: 'azure',
          baseUrl: azure.resourceUrl,
          apiKeyEnv: 'KINDS_AZURE_KEY',
        },
        'azure-entra': {
          kind: 'azure',
          baseUrl: azure.resourceUrl,
          entra: {
            tenantId: TENANT,
            clientId: ENTRA_CLIENT_ID,
            clientSecretEnv: 'KINDS_ENTRA_SECRET',
            authorityUrl: azure.baseUrl,
          },
        },
        aws: {
          kind: 'bedrock',
          region: 'us-east-1',
          baseUrl: bedrock.baseUrl,
          accessKeyIdEnv: 'KINDS_AWS_ID',
          secretAccessKeyEnv: 'KINDS_AWS_SECRET',
          sessionTokenEnv: 'KINDS_AWS_TOKEN',
        },
      },
      models: [
        ...(
          JSON.parse(readFileSync('config/catalog.json', 'utf8')) as {
            models: unknown[];
          }
        ).models,
        ...models,
      ],
      plans: shipped.plans.map((plan) =>
        plan.code === 'pro'
          ? { ...plan, models: [...plan.models, ...models.map((m) => m.id)] }
          : plan,
      ),
    };
    const file = join(mkdtempSync(join(tmpdir(), 'kinds-')), 'catalog.json');
    writeFileSync(file, JSON.stringify(catalog));
    t = await bootTestApp({
      DATABASE_URL: database.url,
      CATALOG_FILE: file,
      KINDS_GEMINI_URL: gemini.baseUrl,
      KINDS_GEMINI_KEY: GEMINI_KEYS[0],
      KINDS_AZURE_KEY: AZURE_KEY,
      KINDS_ENTRA_SECRET: ENTRA_CLIENT_SECRET,
      KINDS_AWS_ID: AWS.accessKeyId,
      KINDS_AWS_SECRET: AWS.secretAccessKey,
    });
    base = await listen(t);
    const user = await registerUser(t.http);
    cookie = user.cookie;
    userId = user.id;
    await sql(
      `UPDATE "User" SET "planCode" = 'pro' WHERE id = $1`,
      [user.id],
      database.url,
    );
  });

  afterAll(async () => {
    await t?.close();
    await Promise.all([gemini?.close(), azure?.close(), bedrock?.close()]);
    await database?.drop();
  });

  /** A chat as server-sent events, with the ledger entry it wrote. */
  async function ask(model: string) {
    const idempotencyKey = randomUUID();
    const res = await post(
      base,
      '/v1/chat',
      cookie,
      {
        model,
        messages: [{ role: 'user', content: `Hello ${model}` }],
        idempotencyKey,
      },
      EVENTS,
    ).response;
    expect(res.status).toBe(200);
    const events = parseEvents(res.body);
    const [entry] = await sql<{
      modelId: string;
      inputTokens: number;
      cachedInputTokens: number;
      outputTokens: number;
      credits: number;
    }>(
      `SELECT l."modelId", l."inputTokens", l."cachedInputTokens", l."outputTokens", l.credits
         FROM "LedgerEntry" l JOIN "ChatRequest" r ON r.id = l."chatRequestId"
        WHERE r."userId" = $1 AND r."idempotencyKey" = $2`,
      [userId, idempotencyKey],
      database.url,
    );
    const text = events
      .filter((event) => event.event === 'delta')
      .map((event) => String(event.data.text))
      .join('');
    const usage = events.find((event) => event.event === 'usage')?.data;
    return {
      text,
      usage,
      entry,
      conversationId: res.headers['x-conversation-id'],
    };
  }

  it('Gemini: streamGenerateContent with the key from the environment; its cached tokens priced apart', async () => {
    gemini.mode = {
      kind: 'ok',
      words: ['Hi', ' from', ' Gemini'],
      usage: {
        promptTokenCount: 10,
        candidatesTokenCount: 3,
        cachedContentTokenCount: 6,
      },
    };
    const { text, usage, entry } = await ask('kinds/gemini');
    expect(text).toBe('Hi from Gemini');
    expect(usage).toEqual({
      inputTokens: 10,
      cachedInputTokens: 6,
      outputTokens: 3,
      credits: 4 + 3,
      model: 'kinds/gemini',
    });
    expect(entry).toEqual({
      modelId: 'kinds/gemini',
      inputTokens: 10,
      cachedInputTokens: 6,
      outputTokens: 3,
      credits: 7,
    });
    const call = gemini.requests.at(-1);
    expect(call?.path).toBe(
      '/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse',
    );
    expect(call?.headers['x-goog-api-key']).toBe(GEMINI_KEYS[0]);
  });

  it('Azure OpenAI: the deployment, api-version and api-key; cached prompt tokens priced apart', async () => {
    azure.mode = { kind: 'ok', words: ['Hi', ' Azure'], cachedTokens: 3 };
    const { text, usage, entry, conversationId } = await ask('kinds/azure');
    expect(text).toBe('Hi Azure');
    expect(usage).toEqual(
      expect.objectContaining({ inputTokens: 7, cachedInputTokens: 3 }),
    );
    expect(entry.credits).toBe(7 - 3 + entry.outputTokens);
    const call = azure.calls.at(-1);
    expect(call).toEqual(
      expect.objectContaining({
        deployment: 'gpt-4o-mini',
        apiVersion: '2024-10-21',
        apiKey: AZURE_KEY,
        authorization: undefined,
      }),
    );
    // The conversation shows the cached tokens on the answer.
    const stored = await t.http
      .get(`/v1/conversations/${String(conversationId)}`)
      .set('Cookie', cookie)
      .expect(200);
    expect(stored.body.messages.at(-1).usage).toEqual(
      expect.objectContaining({ cachedInputTokens: 3, model: 'kinds/azure' }),
    );
  });

  it('Azure OpenAI with Entra: one token fetched by client credentials, sent as a bearer, reused', async () => {
    azure.mode = { kind: 'ok', words: ['Entra', ' ok'] };
    const before = azure.tokenRequests;
    expect((await ask('kinds/azure-entra')).text).toBe('Entra ok');
    expect((await ask('kinds/azure-entra')).text).toBe('Entra ok');
    expect(azure.tokenRequests - before).toBe(1);
    const call = azure.calls.at(-1);
    expect(call?.apiKey).toBeUndefined();
    expect(call?.authorization).toMatch(/^Bearer \S+$/);
  });

  it('Bedrock: ConverseStream signed with SigV4 (checked by the fake); cache reads priced apart', async () => {
    bedrock.mode = {
      kind: 'ok',
      words: ['Hi', ' Bedrock'],
      usage: {
        inputTokens: 7,
        outputTokens: 2,
        cacheReadInputTokens: 5,
        cacheWriteInputTokens: 0,
      },
    };
    const { text, usage, entry } = await ask('kinds/bedrock');
    expect(text).toBe('Hi Bedrock');
    expect(usage).toEqual({
      inputTokens: 12,
      cachedInputTokens: 5,
      outputTokens: 2,
      credits: 7 + 2,
      model: 'kinds/bedrock',
    });
    expect(entry.credits).toBe(9);
    const call = bedrock.requests.at(-1);
    expect(call?.signatureVerified).toBe(true);
    expect(call?.path).toBe(
      `/model/${encodeURIComponent('anthropic.claude-3-5-haiku-20241022-v1:0')}/converse-stream`,
    );
  });

  it('never writes a key or secret of any endpoint to the log', () => {
    const logs = t.rawLogs();
    for (const secret of [
      GEMINI_KEYS[0],
      AZURE_KEY,
      ENTRA_CLIENT_SECRET,
      AWS.secretAccessKey,
    ])
      expect(logs).not.toContain(secret);
  });
});

import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import Ajv2020 from 'ajv/dist/2020';
import { chat, listen, post } from './support/chat-client';
import { FakeModelServer } from './support/fake-model-servers';
import { registerUser } from './support/factories';
import { sql } from './support/sql';
import { bootTestApp, TestApp } from './support/test-app';

const exportSchema = JSON.parse(
  readFileSync('schemas/skill-export.schema.json', 'utf8'),
) as object;
const inputSchema = {
  type: 'object',
  properties: { text: { type: 'string', minLength: 1 } },
  required: ['text'],
  additionalProperties: false,
};

async function countSkills(userId: string): Promise<number> {
  const [row] = await sql<{ n: number }>(
    `SELECT count(*)::int AS n FROM "Skill" WHERE "ownerId" = $1`,
    [userId],
  );
  return row.n;
}

describe('skills', () => {
  let t: TestApp;
  let fake: FakeModelServer;
  let base: string;
  beforeAll(async () => {
    fake = await new FakeModelServer().start();
    t = await bootTestApp({
      OPENAI_API_KEY: 'sk-test',
      OPENAI_BASE_URL: fake.baseUrl,
      ECHO_DELAY_MS: '1',
    });
    base = await listen(t);
  });
  afterAll(async () => {
    await t.close();
    await fake.close();
  });
  beforeEach(() => {
    fake.mode = { kind: 'ok', words: ['Done'] };
    fake.requests.length = 0;
  });

  const createSkill = async (
    cookie: string,
    body: Record<string, unknown> = {},
  ) =>
    (
      await t.http
        .post('/v1/skills')
        .set('Cookie', cookie)
        .send({
          name: 'Summarizer',
          instruction: 'Summarize the text.',
          ...body,
        })
        .expect(201)
    ).body;

  describe('create, list, get', () => {
    it('creates a private Skill with version 1, no organization and no tools', async () => {
      const user = await registerUser(t.http);
      const skill = await createSkill(user.cookie, {
        input_schema: inputSchema,
        output_schema: { type: 'string' },
      });
      expect(skill).toEqual({
        id: expect.any(String),
        owner_id: user.id,
        organization_id: null,
        allowed_tools: [],
        name: 'Summarizer',
        version: 1,
        created_at: expect.any(String),
        updated_at: expect.any(String),
        versions: [
          {
            version: 1,
            instruction: 'Summarize the text.',
            input_schema: inputSchema,
            output_schema: { type: 'string' },
            created_at: expect.any(String),
          },
        ],
      });
      expect(
        (
          await t.http
            .get(`/v1/skills/${skill.id}`)
            .set('Cookie', user.cookie)
            .expect(200)
        ).body,
      ).toEqual(skill);
    });

    it('refuses invalid schemas and fields with a 400 naming the problem, storing nothing', async () => {
      const user = await registerUser(t.http);
      const cases: [Record<string, unknown>, string][] = [
        [{ input_schema: { type: 'strnig' } }, 'input_schema.type'],
        [
          { output_schema: { properties: { a: { minimum: 'one' } } } },
          'output_schema.properties.a.minimum',
        ],
        [{ input_schema: 'a string' }, 'input_schema'],
        [
          {
            input_schema: {
              $schema: 'http://json-schema.org/draft-07/schema#',
            },
          },
          'input_schema',
        ],
        [{ input_schema: { $ref: '#/$defs/nothing' } }, 'input_schema'],
        [{ name: '' }, 'name'],
        [{ name: '   ' }, 'name'],
        [{ name: 'n'.repeat(201) }, 'name'],
        [{ instruction: '' }, 'instruction'],
        [{ instruction: 'i'.repeat(20_001) }, 'instruction'],
        [{ instruction: 42 }, 'instruction'],
        [{ allowed_tools: ['shell'] }, 'allowed_tools'],
        [{ owner_id: randomUUID() }, 'owner_id'],
      ];
      for (const [body, field] of cases) {
        const res = await t.http
          .post('/v1/skills')
          .set('Cookie', user.cookie)
          .send({ name: 'S', instruction: 'I', ...body });
        expect({ field, status: res.status, code: res.body.code }).toEqual({
          field,
          status: 400,
          code: 'validation_failed',
        });
        expect(
          res.body.errors.map((error: { field: string }) => error.field),
        ).toContain(field);
      }
      expect(await countSkills(user.id)).toBe(0);
    });

    it('lists only the caller’s Skills, newest first, page by page', async () => {
      const user = await registerUser(t.http);
      const other = await registerUser(t.http);
      const ids = [];
      for (const name of ['one', 'two', 'three'])
        ids.push((await createSkill(user.cookie, { name })).id);
      await createSkill(other.cookie, { name: 'foreign' });
      const first = await t.http
        .get('/v1/skills')
        .query({ limit: 2 })
        .set('Cookie', user.cookie)
        .expect(200);
      const second = await t.http
        .get('/v1/skills')
        .query({ limit: 2, cursor: first.body.nextCursor })
        .set('Cookie', user.cookie)
        .expect(200);
      expect(second.body.nextCursor).toBeNull();
      expect(
        [...first.body.data, ...second.body.data].map(
          (skill: { name: string }) => skill.name,
        ),
      ).toEqual(['three', 'two', 'one']);
    });

    it('answers the same 404 for another user’s Skill, an unknown id and a malformed one, on every route', async () => {
      const owner = await registerUser(t.http);
      const intruder = await registerUser(t.http);
      const skill = await createSkill(owner.cookie);
      const bodies: unknown[] = [];
      for (const id of [skill.id, randomUUID(), 'not-a-uuid']) {
        const answers = [
          await t.http.get(`/v1/skills/${id}`).set('Cookie', intruder.cookie),
          await t.http
            .get(`/v1/skills/${id}/export`)
            .set('Cookie', intruder.cookie),
          await t.http
            .post(`/v1/skills/${id}/versions`)
            .set('Cookie', intruder.cookie)
            .send({ instruction: 'take over' }),
          await t.http
            .post(`/v1/skills/${id}/run`)
            .set('Cookie', intruder.cookie)
            .send({
              model: 'local/echo',
              input: 'hi',
              idempotencyKey: randomUUID(),
            }),
        ];
        for (const res of answers) {
          expect(res.status).toBe(404);
          bodies.push({ ...res.body, requestId: undefined });
        }
      }
      expect(new Set(bodies.map((body) => JSON.stringify(body))).size).toBe(1);
      const unchanged = await t.http
        .get(`/v1/skills/${skill.id}`)
        .set('Cookie', owner.cookie)
        .expect(200);
      expect(unchanged.body.versions).toHaveLength(1);
      expect(
        await sql(`SELECT 1 FROM "ChatRequest" WHERE "userId" = $1`, [
          intruder.id,
        ]),
      ).toHaveLength(0);
    });
  });

  describe('versions', () => {
    it('publishes n+1, keeps every version, and the database refuses to change one', async () => {
      const user = await registerUser(t.http);
      const skill = await createSkill(user.cookie);
      const v2 = await t.http
        .post(`/v1/skills/${skill.id}/versions`)
        .set('Cookie', user.cookie)
        .send({ instruction: 'Second.', input_schema: inputSchema })
        .expect(201);
      expect(v2.body).toEqual({
        version: 2,
        instruction: 'Second.',
        input_schema: inputSchema,
        output_schema: null,
        created_at: expect.any(String),
      });
      const full = await t.http
        .get(`/v1/skills/${skill.id}`)
        .set('Cookie', user.cookie)
        .expect(200);
      expect(full.body.version).toBe(2);
      expect(
        full.body.versions.map(
          (version: { version: number; instruction: string }) => [
            version.version,
            version.instruction,
          ],
        ),
      ).toEqual([
        [1, 'Summarize the text.'],
        [2, 'Second.'],
      ]);
      await expect(
        sql(
          `UPDATE "SkillVersion" SET instruction = 'tampered' WHERE "skillId" = $1`,
          [skill.id],
        ),
      ).rejects.toThrow();
      const again = await t.http
        .get(`/v1/skills/${skill.id}`)
        .set('Cookie', user.cookie)
        .expect(200);
      expect(again.body.versions[0].instruction).toBe('Summarize the text.');
      const bad = await t.http
        .post(`/v1/skills/${skill.id}/versions`)
        .set('Cookie', user.cookie)
        .send({ instruction: 'x', output_schema: { type: 7 } });
      expect(bad.status).toBe(400);
      expect(
        (await t.http.get(`/v1/skills/${skill.id}`).set('Cookie', user.cookie))
          .body.versions,
      ).toHaveLength(2);
    });

    it('gives concurrent publishes distinct consecutive numbers', async () => {
      const user = await registerUser(t.http);
      const skill = await createSkill(user.cookie);
      const results = await Promise.all(
        Array.from({ length: 10 }, (_, index) =>
          t.http
            .post(`/v1/skills/${skill.id}/versions`)
            .set('Cookie', user.cookie)
            .send({ instruction: `v${index}` }),
        ),
      );
      expect(results.map((res) => res.status)).toEqual(Array(10).fill(201));
      expect(
        results
          .map((res) => res.body.version)
          .sort((a: number, b: number) => a - b),
      ).toEqual([2, 3, 4, 5, 6, 7, 8, 9, 10, 11]);
      const full = await t.http
        .get(`/v1/skills/${skill.id}`)
        .set('Cookie', user.cookie)
        .expect(200);
      expect(
        full.body.versions.map(
          (version: { version: number }) => version.version,
        ),
      ).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11]);
      expect(full.body.version).toBe(11);
    });
  });

  describe('templates', () => {
    it('lists at least five starters and duplicates one into a new Skill of the caller', async () => {
      const user = await registerUser(t.http);
      const list = await t.http
        .get('/v1/skills/templates')
        .set('Cookie', user.cookie)
        .expect(200);
      expect(list.body.data.length).toBeGreaterThanOrEqual(5);
      const template = list.body.data.find(
        (entry: { id: string }) => entry.id === 'translate',
      );
      expect(template).toEqual(
        expect.objectContaining({
          name: 'Translate',
          description: expect.any(String),
          instruction: expect.any(String),
          input_schema: expect.any(Object),
        }),
      );
      const copy = await t.http
        .post('/v1/skills/templates/translate/duplicate')
        .set('Cookie', user.cookie)
        .expect(201);
      expect(copy.body).toEqual(
        expect.objectContaining({
          owner_id: user.id,
          name: 'Translate',
          version: 1,
          allowed_tools: [],
        }),
      );
      expect(copy.body.versions).toEqual([
        expect.objectContaining({
          version: 1,
          instruction: template.instruction,
          input_schema: template.input_schema,
          output_schema: template.output_schema,
        }),
      ]);
      const other = await registerUser(t.http);
      await t.http
        .get(`/v1/skills/${copy.body.id}`)
        .set('Cookie', other.cookie)
        .expect(404);
      expect(
        (
          await t.http
            .post('/v1/skills/templates/no-such-template/duplicate')
            .set('Cookie', user.cookie)
        ).status,
      ).toBe(404);
      await sql(
        `UPDATE "SkillTemplate" SET "retiredAt" = now() WHERE id = 'explain-simply'`,
      );
      try {
        const afterRetire = await t.http
          .get('/v1/skills/templates')
          .set('Cookie', user.cookie)
          .expect(200);
        expect(
          afterRetire.body.data.map((entry: { id: string }) => entry.id),
        ).not.toContain('explain-simply');
        expect(
          (
            await t.http
              .post('/v1/skills/templates/explain-simply/duplicate')
              .set('Cookie', user.cookie)
          ).status,
        ).toBe(404);
      } finally {
        await sql(
          `UPDATE "SkillTemplate" SET "retiredAt" = NULL WHERE id = 'explain-simply'`,
        );
      }
    });
  });

  describe('export and import', () => {
    const portable = {
      name: 'Portable',
      instruction: 'Do the thing.',
      input_schema: inputSchema,
      output_schema: { type: 'string' },
      version: 7,
    };

    it('exports exactly the portable shape of the latest version, valid against the shipped schema', async () => {
      const user = await registerUser(t.http);
      const skill = await createSkill(user.cookie);
      await t.http
        .post(`/v1/skills/${skill.id}/versions`)
        .set('Cookie', user.cookie)
        .send({ instruction: 'Latest.' })
        .expect(201);
      const exported = await t.http
        .get(`/v1/skills/${skill.id}/export`)
        .set('Cookie', user.cookie)
        .expect(200);
      expect(exported.body).toEqual({
        name: 'Summarizer',
        instruction: 'Latest.',
        input_schema: null,
        output_schema: null,
        version: 2,
      });
      const validate = new Ajv2020({
        allErrors: true,
        allowUnionTypes: true,
      }).compile(exportSchema);
      expect(validate(exported.body)).toBe(true);
      expect(validate({ ...exported.body, id: skill.id })).toBe(false);
    });

    it('round-trips: export → import → export gives identical JSON, version kept, never any tools', async () => {
      const user = await registerUser(t.http);
      const imported = await t.http
        .post('/v1/skills/import')
        .set('Cookie', user.cookie)
        .send(portable)
        .expect(201);
      expect(imported.body).toEqual(
        expect.objectContaining({
          owner_id: user.id,
          organization_id: null,
          allowed_tools: [],
          version: 7,
        }),
      );
      const first = (
        await t.http
          .get(`/v1/skills/${imported.body.id}/export`)
          .set('Cookie', user.cookie)
          .expect(200)
      ).body;
      expect(first).toEqual(portable);
      const reimported = await t.http
        .post('/v1/skills/import')
        .set('Cookie', user.cookie)
        .send(first)
        .expect(201);
      const second = (
        await t.http
          .get(`/v1/skills/${reimported.body.id}/export`)
          .set('Cookie', user.cookie)
          .expect(200)
      ).body;
      expect(JSON.stringify(second)).toBe(JSON.stringify(first));
      const next = await t.http
        .post(`/v1/skills/${reimported.body.id}/versions`)
        .set('Cookie', user.cookie)
        .send({ instruction: 'Next.' })
        .expect(201);
      expect(next.body.version).toBe(8);
      const minimal = await t.http
        .post('/v1/skills/import')
        .set('Cookie', user.cookie)
        .send({ name: 'Min', instruction: 'I.' })
        .expect(201);
      expect(minimal.body.version).toBe(1);
    });

    it('refuses id, owner_id, organization_id, allowed_tools and any other field, one by one and together, storing nothing', async () => {
      const user = await registerUser(t.http);
      const forbidden: Record<string, unknown> = {
        id: randomUUID(),
        owner_id: randomUUID(),
        organization_id: randomUUID(),
        allowed_tools: ['shell'],
        tools: [],
        created_at: 'now',
      };
      for (const [field, value] of Object.entries(forbidden)) {
        const res = await t.http
          .post('/v1/skills/import')
          .set('Cookie', user.cookie)
          .send({ ...portable, [field]: value });
        expect({ field, status: res.status, code: res.body.code }).toEqual({
          field,
          status: 400,
          code: 'forbidden_field',
        });
        expect(res.body.errors).toEqual([
          {
            field,
            code: 'forbidden_field',
            message: `${field} is not accepted on import`,
          },
        ]);
        expect(res.body.detail).toContain(field);
      }
      const together = await t.http
        .post('/v1/skills/import')
        .set('Cookie', user.cookie)
        .send({ ...portable, ...forbidden, instruction: '' });
      expect(together.status).toBe(400);
      expect(together.body.code).toBe('forbidden_field');
      expect(
        together.body.errors
          .map((error: { field: string }) => error.field)
          .sort(),
      ).toEqual(Object.keys(forbidden).sort());
      // allowed_tools with an empty list is still a field an import may not carry.
      expect(
        (
          await t.http
            .post('/v1/skills/import')
            .set('Cookie', user.cookie)
            .send({ ...portable, allowed_tools: [] })
        ).body.code,
      ).toBe('forbidden_field');
      expect(await countSkills(user.id)).toBe(0);
    });

    it('validates the portable fields themselves', async () => {
      const user = await registerUser(t.http);
      const cases: [unknown, string][] = [
        [{ ...portable, version: 0 }, 'version'],
        [{ ...portable, version: 1.5 }, 'version'],
        [{ ...portable, version: '2' }, 'version'],
        [{ ...portable, name: undefined }, 'name'],
        [{ ...portable, instruction: null }, 'instruction'],
        [{ ...portable, input_schema: { type: 'nope' } }, 'input_schema.type'],
        [[portable], 'body'],
      ];
      for (const [body, field] of cases) {
        const res = await t.http
          .post('/v1/skills/import')
          .set('Cookie', user.cookie)
          .send(body as object);
        expect({ field, status: res.status, code: res.body.code }).toEqual({
          field,
          status: 400,
          code: 'validation_failed',
        });
        expect(
          res.body.errors.map((error: { field: string }) => error.field),
        ).toContain(field);
      }
      expect(await countSkills(user.id)).toBe(0);
    });
  });

  describe('run', () => {
    it('streams through the chat pipeline with the instruction as system message; ledger and conversation record the version', async () => {
      const user = await registerUser(t.http);
      const skill = await createSkill(user.cookie, {
        instruction: 'You are terse.',
      });
      const v2 = await t.http
        .post(`/v1/skills/${skill.id}/versions`)
        .set('Cookie', user.cookie)
        .send({ instruction: 'You are very terse.' })
        .expect(201);
      const res = await post(base, `/v1/skills/${skill.id}/run`, user.cookie, {
        model: 'openai/gpt-4o-mini',
        input: { text: 'hello', lang: 'en' },
        idempotencyKey: randomUUID(),
      }).response;
      expect(res.status).toBe(200);
      expect(res.headers['content-type']).toBe('text/plain; charset=utf-8');
      expect(res.body).toBe('Done');
      expect(fake.requests).toHaveLength(1);
      expect(fake.requests[0].messages).toEqual([
        { role: 'system', content: 'You are very terse.' },
        { role: 'user', content: '{"text":"hello","lang":"en"}' },
      ]);
      const [version] = await sql<{ id: string }>(
        `SELECT id FROM "SkillVersion" WHERE "skillId" = $1 AND number = 2`,
        [skill.id],
      );
      const conversationId = res.headers['x-conversation-id'] as string;
      const conversation = await t.http
        .get(`/v1/conversations/${conversationId}`)
        .set('Cookie', user.cookie)
        .expect(200);
      expect(conversation.body).toEqual(
        expect.objectContaining({
          skillId: skill.id,
          skillVersionId: version.id,
        }),
      );
      expect(
        conversation.body.messages.map(
          (m: { role: string; content: string }) => [m.role, m.content],
        ),
      ).toEqual([
        ['user', '{"text":"hello","lang":"en"}'],
        ['assistant', 'Done'],
      ]);
      const usage = await t.http
        .get('/v1/billing/usage')
        .set('Cookie', user.cookie)
        .expect(200);
      expect(usage.body.data).toEqual([
        expect.objectContaining({
          status: 'completed',
          skillId: skill.id,
          skillVersionId: version.id,
          conversationId,
        }),
      ]);
      expect(v2.body.version).toBe(2);
    });

    it('sends a string input as it is', async () => {
      const user = await registerUser(t.http);
      const skill = await createSkill(user.cookie);
      const res = await post(base, `/v1/skills/${skill.id}/run`, user.cookie, {
        model: 'local/echo',
        input: 'plain words',
        idempotencyKey: randomUUID(),
      }).response;
      expect(res.body).toBe('Echo: plain words');
    });

    it('refuses input that does not match the input_schema with 422 naming the errors, with no provider call and nothing billed', async () => {
      const user = await registerUser(t.http);
      const skill = await createSkill(user.cookie, {
        input_schema: inputSchema,
      });
      const key = randomUUID();
      for (const input of [
        { text: '' },
        { other: 1 },
        'just a string',
        ['a'],
      ]) {
        const res = await t.http
          .post(`/v1/skills/${skill.id}/run`)
          .set('Cookie', user.cookie)
          .send({ model: 'openai/gpt-4o-mini', input, idempotencyKey: key });
        expect(res.status).toBe(422);
        expect(res.body.code).toBe('input_invalid');
        expect(res.body.errors.length).toBeGreaterThan(0);
        expect(res.body.errors[0].field).toMatch(/^input/);
      }
      expect(fake.requests).toHaveLength(0);
      expect(
        await sql(`SELECT 1 FROM "ChatRequest" WHERE "userId" = $1`, [user.id]),
      ).toHaveLength(0);
      const quota = await t.http
        .get('/v1/billing/quota')
        .set('Cookie', user.cookie)
        .expect(200);
      expect(quota.body).toEqual(
        expect.objectContaining({ used: 0, reserved: 0 }),
      );
      // The refused key is still free.
      const ok = await post(base, `/v1/skills/${skill.id}/run`, user.cookie, {
        model: 'openai/gpt-4o-mini',
        input: { text: 'fine' },
        idempotencyKey: key,
      }).response;
      expect(ok.status).toBe(200);
    });

    it('is idempotent: a retry replays without a second provider call or charge; another input with the key is a 422', async () => {
      const user = await registerUser(t.http);
      const skill = await createSkill(user.cookie);
      const key = randomUUID();
      const body = {
        model: 'openai/gpt-4o-mini',
        input: 'once',
        idempotencyKey: key,
      };
      const first = await post(
        base,
        `/v1/skills/${skill.id}/run`,
        user.cookie,
        body,
      ).response;
      const quota = (
        await t.http.get('/v1/billing/quota').set('Cookie', user.cookie)
      ).body;
      const retry = await post(
        base,
        `/v1/skills/${skill.id}/run`,
        user.cookie,
        body,
      ).response;
      expect(retry.status).toBe(200);
      expect(retry.body).toBe(first.body);
      expect(retry.headers['idempotent-replayed']).toBe('true');
      expect(retry.headers['x-conversation-id']).toBe(
        first.headers['x-conversation-id'],
      );
      expect(fake.requests).toHaveLength(1);
      expect(
        (await t.http.get('/v1/billing/quota').set('Cookie', user.cookie)).body,
      ).toEqual(quota);
      const reused = await t.http
        .post(`/v1/skills/${skill.id}/run`)
        .set('Cookie', user.cookie)
        .send({ ...body, input: 'twice' });
      expect(reused.status).toBe(422);
      expect(reused.body.code).toBe('idempotency_key_reused');
      // The same key on /v1/chat means another request too.
      const asChat = await chat(base, user.cookie, {
        model: 'openai/gpt-4o-mini',
        idempotencyKey: key,
        messages: [{ role: 'user', content: 'once' }],
      }).response;
      expect(asChat.status).toBe(422);
    });

    it('requires model, input and idempotencyKey', async () => {
      const user = await registerUser(t.http);
      const skill = await createSkill(user.cookie);
      for (const [body, field] of [
        [{ model: 'local/echo', input: 'x' }, 'idempotencyKey'],
        [{ model: 'local/echo', idempotencyKey: randomUUID() }, 'input'],
        [{ input: 'x', idempotencyKey: randomUUID() }, 'model'],
        [
          {
            model: 'local/echo',
            input: 'x',
            idempotencyKey: randomUUID(),
            messages: [],
          },
          'messages',
        ],
      ] as const) {
        const res = await t.http
          .post(`/v1/skills/${skill.id}/run`)
          .set('Cookie', user.cookie)
          .send(body);
        expect(res.status).toBe(400);
        expect(
          res.body.errors.map((error: { field: string }) => error.field),
        ).toContain(field);
      }
    });
  });

  describe('hostile input', () => {
    it('refuses $async schemas and numbers JSON cannot hold, storing nothing', async () => {
      const user = await registerUser(t.http);
      const async = await t.http
        .post('/v1/skills')
        .set('Cookie', user.cookie)
        .send({
          name: 'S',
          instruction: 'I',
          input_schema: { $async: true, type: 'string' },
        });
      expect(async.status).toBe(400);
      expect(async.body.errors[0].field).toBe('input_schema.$async');
      const huge = await t.http
        .post('/v1/skills')
        .set('Cookie', user.cookie)
        .set('Content-Type', 'application/json')
        .send(
          '{"name":"S","instruction":"I","input_schema":{"type":"number","maximum":1e400}}',
        );
      expect(huge.status).toBe(400);
      expect(huge.body.detail).toContain('1e400');
      expect(await countSkills(user.id)).toBe(0);
    });

    it('a schema claiming the meta-schema $id breaks nobody else’s schemas', async () => {
      const user = await registerUser(t.http);
      await t.http
        .post('/v1/skills')
        .set('Cookie', user.cookie)
        .send({
          name: 'S',
          instruction: 'I',
          input_schema: {
            $id: 'https://json-schema.org/draft/2020-12/schema',
            type: 'string',
          },
        });
      const other = await registerUser(t.http);
      await createSkill(other.cookie, { input_schema: inputSchema });
      const invalid = await t.http
        .post('/v1/skills')
        .set('Cookie', other.cookie)
        .send({
          name: 'S',
          instruction: 'I',
          input_schema: { type: 'strnig' },
        });
      expect(invalid.status).toBe(400);
    });

    it('keeps keys such as constructor and toString in schemas and inputs', async () => {
      const user = await registerUser(t.http);
      const schema = {
        type: 'object',
        properties: {
          constructor: { type: 'string' },
          toString: { type: 'string' },
        },
        required: ['constructor'],
      };
      const skill = await createSkill(user.cookie, { input_schema: schema });
      expect(skill.versions[0].input_schema).toEqual(schema);
      const missing = await t.http
        .post(`/v1/skills/${skill.id}/run`)
        .set('Cookie', user.cookie)
        .send({
          model: 'local/echo',
          input: { toString: 'x' },
          idempotencyKey: randomUUID(),
        });
      expect(missing.status).toBe(422);
      const res = await post(base, `/v1/skills/${skill.id}/run`, user.cookie, {
        model: 'openai/gpt-4o-mini',
        input: { constructor: 'c', toString: 't' },
        idempotencyKey: randomUUID(),
      }).response;
      expect(res.status).toBe(200);
      expect(fake.requests[0].messages).toEqual([
        expect.objectContaining({ role: 'system' }),
        { role: 'user', content: '{"constructor":"c","toString":"t"}' },
      ]);
    });

    it('a catastrophic pattern is stopped by the time budget (422) while the service keeps answering', async () => {
      const user = await registerUser(t.http);
      const skill = await createSkill(user.cookie, {
        input_schema: { type: 'string', pattern: '^(a+)+$' },
      });
      const evil = `${'a'.repeat(40)}!`;
      const started = Date.now();
      const run = t.http
        .post(`/v1/skills/${skill.id}/run`)
        .set('Cookie', user.cookie)
        .send({
          model: 'local/echo',
          input: evil,
          idempotencyKey: randomUUID(),
        });
      await new Promise((done) => setTimeout(done, 100));
      const live = await t.http.get('/v1/health/live');
      expect(live.status).toBe(200);
      expect(Date.now() - started).toBeLessThan(1_000);
      const res = await run;
      expect(res.status).toBe(422);
      expect(res.body.errors[0].code).toBe('input_too_complex');
      // The next check gets a fresh worker and works normally.
      const ok = await post(base, `/v1/skills/${skill.id}/run`, user.cookie, {
        model: 'local/echo',
        input: 'aaa',
        idempotencyKey: randomUUID(),
      }).response;
      expect(ok.status).toBe(200);
    });

    it('answers 400 for a NUL in the URL, a null version and inputs that are neither text nor JSON objects', async () => {
      const user = await registerUser(t.http);
      expect(
        (
          await t.http
            .post('/v1/skills/templates/%00/duplicate')
            .set('Cookie', user.cookie)
        ).status,
      ).toBe(400);
      expect(
        (await t.http.get('/v1/skills/%00').set('Cookie', user.cookie)).status,
      ).toBe(400);
      const nullVersion = await t.http
        .post('/v1/skills/import')
        .set('Cookie', user.cookie)
        .send({ name: 'S', instruction: 'I', version: null });
      expect(nullVersion.status).toBe(400);
      expect(nullVersion.body.errors[0].field).toBe('version');
      const skill = await createSkill(user.cookie);
      for (const input of ['', '   ', 12, true, null]) {
        const res = await t.http
          .post(`/v1/skills/${skill.id}/run`)
          .set('Cookie', user.cookie)
          .send({ model: 'local/echo', input, idempotencyKey: randomUUID() });
        expect({ input, status: res.status }).toEqual({ input, status: 400 });
      }
      expect(
        await sql(`SELECT 1 FROM "ChatRequest" WHERE "userId" = $1`, [user.id]),
      ).toHaveLength(0);
    });
  });

  describe('runs over time', () => {
    it('a retry is replayed even after a stricter version is published', async () => {
      const user = await registerUser(t.http);
      const skill = await createSkill(user.cookie);
      const body = {
        model: 'local/echo',
        input: 'loose input',
        idempotencyKey: randomUUID(),
      };
      const first = await post(
        base,
        `/v1/skills/${skill.id}/run`,
        user.cookie,
        body,
      ).response;
      await t.http
        .post(`/v1/skills/${skill.id}/versions`)
        .set('Cookie', user.cookie)
        .send({ instruction: 'Strict.', input_schema: inputSchema })
        .expect(201);
      const retry = await post(
        base,
        `/v1/skills/${skill.id}/run`,
        user.cookie,
        body,
      ).response;
      expect(retry.status).toBe(200);
      expect(retry.body).toBe(first.body);
      expect(retry.headers['idempotent-replayed']).toBe('true');
    });

    it('a run continuing a conversation records the Skill version that ran last', async () => {
      const user = await registerUser(t.http);
      const skill = await createSkill(user.cookie);
      const first = await post(
        base,
        `/v1/skills/${skill.id}/run`,
        user.cookie,
        { model: 'local/echo', input: 'one', idempotencyKey: randomUUID() },
      ).response;
      const conversationId = first.headers['x-conversation-id'] as string;
      await t.http
        .post(`/v1/skills/${skill.id}/versions`)
        .set('Cookie', user.cookie)
        .send({ instruction: 'Two.' })
        .expect(201);
      const second = await post(
        base,
        `/v1/skills/${skill.id}/run`,
        user.cookie,
        {
          model: 'local/echo',
          input: 'two',
          conversationId,
          idempotencyKey: randomUUID(),
        },
      ).response;
      expect(second.headers['x-conversation-id']).toBe(conversationId);
      const [v2] = await sql<{ id: string }>(
        `SELECT id FROM "SkillVersion" WHERE "skillId" = $1 AND number = 2`,
        [skill.id],
      );
      const conversation = await t.http
        .get(`/v1/conversations/${conversationId}`)
        .set('Cookie', user.cookie)
        .expect(200);
      expect(conversation.body.skillVersionId).toBe(v2.id);
      expect(
        conversation.body.messages.map((m: { content: string }) => m.content),
      ).toEqual(['one', 'Echo: one', 'two', 'Echo: two']);
    });
  });
});

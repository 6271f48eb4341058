import { randomUUID } from 'node:crypto';
import { ScratchDatabase } from '../scripts/lib/scratch-database';
import { eventually } from './support/eventually';
import { sql } from './support/sql';
import { FakeModelServer } from './support/fake-model-servers';
import {
  registerUser,
  registerVerifiedUser,
  uniqueEmail,
} from './support/factories';
import { createMigratedDatabase } from './support/test-database';
import { bootTestApp, TestApp } from './support/test-app';

/**
 * Ratings of answers (docs: /tmp/c32/contract.md, "Feedback" and "Admin"), black-box through HTTP:
 * PUT/DELETE a rating, how conversations and the account export show it, and the admins' summary.
 */

type User = Awaited<ReturnType<typeof registerUser>>;

const ECHO = 'local/echo';
const OPENAI = 'openai/gpt-4o-mini';
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/;

interface Feedback {
  rating: 'up' | 'down';
  tags: string[];
  comment: string | null;
  createdAt: string;
  updatedAt: string;
}

interface Message {
  id: string;
  role: string;
  content: string;
  model: string | null;
  feedback: Feedback | null;
}

interface Conversation {
  id: string;
  messages: Message[];
}

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function expectProblem(
  res: { status: number; headers: Record<string, string>; body: unknown },
  status: number,
  code: string,
) {
  expect({
    status: res.status,
    code: (res.body as { code?: string }).code,
  }).toEqual({ status, code });
  expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
}

/** What a 400 names: the fields of its errors. */
const fieldsOf = (res: { body: { errors?: { field: string }[] } }) =>
  (res.body.errors ?? []).map((error) => error.field);

/** The helpers every block uses, on the app `t`. */
function helpers(t: () => TestApp) {
  const conversationOf = async (
    cookie: string,
    id: string,
  ): Promise<Conversation> =>
    (
      await t()
        .http.get(`/v1/conversations/${id}`)
        .set('Cookie', cookie)
        .expect(200)
    ).body as Conversation;

  /** One chat turn; answers the conversation once `expected` messages are stored on its branch. */
  async function turn(
    user: User,
    messages: { role: string; content: string }[],
    options: { conversationId?: string; model?: string; expected: number },
  ): Promise<Conversation> {
    const { expected, model = ECHO, conversationId } = options;
    const res = await t()
      .http.post('/v1/chat')
      .set('Cookie', user.cookie)
      .send({
        model,
        idempotencyKey: randomUUID(),
        messages,
        ...(conversationId ? { conversationId } : {}),
      });
    expect({ status: res.status, body: res.text }).toEqual({
      status: 200,
      body: expect.any(String),
    });
    const id = res.headers['x-conversation-id'];
    let conversation!: Conversation;
    await eventually(async () => {
      conversation = await conversationOf(user.cookie, id);
      return conversation.messages.length === expected;
    }, 15_000);
    return conversation;
  }

  /** A conversation of two echo turns: [question, answer, question, answer]. */
  const twoTurns = async (user: User, label = 'question') => {
    const first = await turn(
      user,
      [{ role: 'user', content: `${label} one` }],
      {
        expected: 2,
      },
    );
    return turn(user, [{ role: 'user', content: `${label} two` }], {
      conversationId: first.id,
      expected: 4,
    });
  };

  const path = (conversationId: string, messageId: string) =>
    `/v1/conversations/${conversationId}/messages/${messageId}/feedback`;
  const rate = (
    cookie: string,
    conversationId: string,
    messageId: string,
    body: unknown,
  ) =>
    t()
      .http.put(path(conversationId, messageId))
      .set('Cookie', cookie)
      .send(body as object);
  const unrate = (cookie: string, conversationId: string, messageId: string) =>
    t().http.delete(path(conversationId, messageId)).set('Cookie', cookie);

  return { conversationOf, turn, twoTurns, path, rate, unrate };
}

describe('answer feedback', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await bootTestApp();
  });
  afterAll(() => t?.close());
  const { conversationOf, turn, twoTurns, rate, unrate } = helpers(() => t);

  const feedbackOf = async (user: User, conversationId: string) =>
    (await conversationOf(user.cookie, conversationId)).messages.map(
      (message) => message.feedback,
    );

  describe('PUT and DELETE /v1/conversations/:id/messages/:messageId/feedback', () => {
    it('rates an answer with tags and a comment, shown on that message only; PUT replaces it whole; DELETE clears it', async () => {
      const user = await registerUser(t.http);
      const conversation = await twoTurns(user);
      const [, a1, , a2] = conversation.messages;
      expect(conversation.messages.map((message) => message.feedback)).toEqual([
        null,
        null,
        null,
        null,
      ]);
      expect(conversation.messages.map((message) => message.model)).toEqual([
        null,
        ECHO,
        null,
        ECHO,
      ]);

      const up = await rate(user.cookie, conversation.id, a1.id, {
        rating: 'up',
        tags: ['helpful', ' clear ', 'helpful'],
        comment: '  Right on point.  ',
      }).expect(200);
      const first = up.body as Feedback;
      expect(first).toEqual({
        rating: 'up',
        tags: ['helpful', 'clear'],
        comment: 'Right on point.',
        createdAt: expect.stringMatching(ISO),
        updatedAt: expect.stringMatching(ISO),
      });
      expect(await feedbackOf(user, conversation.id)).toEqual([
        null,
        first,
        null,
        null,
      ]);

      // PUT again: the whole rating is replaced (tags omitted -> [], comment omitted -> null).
      await pause(5);
      const down = (
        await rate(user.cookie, conversation.id, a1.id, {
          rating: 'down',
        }).expect(200)
      ).body as Feedback;
      expect(down).toEqual({
        rating: 'down',
        tags: [],
        comment: null,
        createdAt: first.createdAt,
        updatedAt: expect.stringMatching(ISO),
      });
      expect(Date.parse(down.updatedAt)).toBeGreaterThan(
        Date.parse(first.updatedAt),
      );
      expect(await feedbackOf(user, conversation.id)).toEqual([
        null,
        down,
        null,
        null,
      ]);

      // The other answer rated apart; an empty comment is no comment.
      const other = (
        await rate(user.cookie, conversation.id, a2.id, {
          rating: 'up',
          tags: [],
          comment: '   ',
        }).expect(200)
      ).body as Feedback;
      expect(other).toEqual(
        expect.objectContaining({ rating: 'up', tags: [], comment: null }),
      );
      expect(
        (
          await rate(user.cookie, conversation.id, a2.id, {
            rating: 'up',
            comment: null,
          }).expect(200)
        ).body.comment,
      ).toBeNull();

      const cleared = await unrate(user.cookie, conversation.id, a1.id).expect(
        204,
      );
      expect(cleared.text).toBe('');
      const after = await feedbackOf(user, conversation.id);
      expect(after[1]).toBeNull();
      expect(after[3]).toEqual(expect.objectContaining({ rating: 'up' }));
      // DELETE again (nothing there): still 204, nothing else touched.
      await unrate(user.cookie, conversation.id, a1.id).expect(204);
      expect(await feedbackOf(user, conversation.id)).toEqual(after);
      // A new rating after a delete is a new one.
      const again = (
        await rate(user.cookie, conversation.id, a1.id, {
          rating: 'up',
        }).expect(200)
      ).body as Feedback;
      expect(Date.parse(again.createdAt)).toBeGreaterThanOrEqual(
        Date.parse(down.updatedAt),
      );
    });

    it('accepts the limits exactly: 10 tags, a tag of 40 characters, a comment of 2000', async () => {
      const user = await registerUser(t.http);
      const conversation = await turn(
        user,
        [{ role: 'user', content: 'limits' }],
        { expected: 2 },
      );
      const answer = conversation.messages[1];
      const tags = Array.from({ length: 10 }, (_, index) =>
        index === 0 ? 'x'.repeat(40) : `tag-${index}`,
      );
      const comment = 'c'.repeat(2000);
      const res = await rate(user.cookie, conversation.id, answer.id, {
        rating: 'down',
        tags,
        comment,
      }).expect(200);
      expect(res.body).toEqual(
        expect.objectContaining({ rating: 'down', tags, comment }),
      );
      expect((await feedbackOf(user, conversation.id))[1]).toEqual(res.body);

      // Counted as PostgreSQL counts: a character with its variation selector is two.
      const selectors = 'a\uFE0F'.repeat(1000);
      const exact = await rate(user.cookie, conversation.id, answer.id, {
        rating: 'up',
        comment: selectors,
      }).expect(200);
      expect(exact.body).toEqual(
        expect.objectContaining({ comment: selectors }),
      );
    });

    it('rates the answer of a Skill deleted since (the rating names no Skill)', async () => {
      const user = await registerUser(t.http);
      const skill = (
        await t.http
          .post('/v1/skills')
          .set('Cookie', user.cookie)
          .send({ name: 'Gone soon', instruction: 'Answer.' })
          .expect(201)
      ).body as { id: string };
      const run = await t.http
        .post(`/v1/skills/${skill.id}/run`)
        .set('Cookie', user.cookie)
        .send({ model: ECHO, input: 'hello', idempotencyKey: randomUUID() })
        .expect(200);
      const conversationId: string = run.headers['x-conversation-id'];
      let answerId = '';
      await eventually(async () => {
        const last = (
          await conversationOf(user.cookie, conversationId)
        ).messages.at(-1);
        answerId = last?.role === 'assistant' ? last.id : '';
        return answerId !== '';
      }, 15_000);
      // As an organization's Skill is deleted (its runs keep naming it).
      await sql('DELETE FROM "Skill" WHERE id = $1', [skill.id]);

      const res = await rate(user.cookie, conversationId, answerId, {
        rating: 'down',
        comment: 'still rateable',
      }).expect(200);
      expect(res.body).toEqual(
        expect.objectContaining({ rating: 'down', comment: 'still rateable' }),
      );
      const [row] = await sql<{ skillId: string | null }>(
        'SELECT "skillId" FROM "MessageFeedback" WHERE "messageId" = $1',
        [answerId],
      );
      expect(row).toEqual({ skillId: null });
    });

    it('refuses a user or system message with 400 naming messageId, storing nothing', async () => {
      const user = await registerUser(t.http);
      const conversation = await turn(
        user,
        [
          { role: 'system', content: 'Be brief.' },
          { role: 'user', content: 'with a system message' },
        ],
        { expected: 3 },
      );
      const roles = conversation.messages.map((message) => message.role);
      expect(roles).toEqual(['system', 'user', 'assistant']);
      const [system, question] = conversation.messages;
      for (const message of [system, question]) {
        const res = await rate(user.cookie, conversation.id, message.id, {
          rating: 'up',
        });
        expectProblem(res, 400, 'validation_failed');
        expect({
          role: message.role,
          field: res.body.errors?.[0]?.field,
        }).toEqual({ role: message.role, field: 'messageId' });
      }
      expect(await feedbackOf(user, conversation.id)).toEqual([
        null,
        null,
        null,
      ]);
    });

    it('answers 404 for another user’s conversation or message, a message of another conversation, unknown and malformed ids, changing nothing', async () => {
      const owner = await registerUser(t.http);
      const stranger = await registerUser(t.http);
      const conversation = await twoTurns(owner);
      const answer = conversation.messages[1];
      const rated = (
        await rate(owner.cookie, conversation.id, answer.id, {
          rating: 'up',
          comment: 'mine',
        }).expect(200)
      ).body as Feedback;
      const elsewhere = await turn(
        owner,
        [{ role: 'user', content: 'elsewhere' }],
        { expected: 2 },
      );
      const strangers = await turn(
        stranger,
        [{ role: 'user', content: 'strangers' }],
        { expected: 2 },
      );

      const cases: [string, string, string][] = [
        ['a stranger on the owner’s answer', stranger.cookie, conversation.id],
        ['unknown conversation', owner.cookie, randomUUID()],
        ['malformed conversation id', owner.cookie, 'not-a-uuid'],
        ['another conversation of the owner', owner.cookie, elsewhere.id],
        ['the stranger’s conversation', owner.cookie, strangers.id],
      ];
      const attempts: [string, string, string, string][] = [
        ...cases.map(
          ([label, cookie, conversationId]) =>
            [label, cookie, conversationId, answer.id] as [
              string,
              string,
              string,
              string,
            ],
        ),
        ['unknown message', owner.cookie, conversation.id, randomUUID()],
        ['malformed message id', owner.cookie, conversation.id, 'nope'],
        [
          'a message id with a non-hex character',
          owner.cookie,
          conversation.id,
          `${answer.id.slice(0, -1)}z`,
        ],
        [
          'the stranger’s answer under the stranger’s conversation, by the owner',
          owner.cookie,
          strangers.id,
          strangers.messages[1].id,
        ],
        [
          'the owner’s answer under the stranger’s conversation, by the stranger',
          stranger.cookie,
          strangers.id,
          answer.id,
        ],
      ];
      for (const [label, cookie, conversationId, messageId] of attempts) {
        const put = await rate(cookie, conversationId, messageId, {
          rating: 'down',
        });
        expect({ label, status: put.status, code: put.body.code }).toEqual({
          label,
          status: 404,
          code: 'not_found',
        });
        const del = await unrate(cookie, conversationId, messageId);
        expect({ label, status: del.status, code: del.body.code }).toEqual({
          label,
          status: 404,
          code: 'not_found',
        });
      }
      expect((await feedbackOf(owner, conversation.id))[1]).toEqual(rated);
      expect(await feedbackOf(stranger, strangers.id)).toEqual([null, null]);
      expect(await feedbackOf(owner, elsewhere.id)).toEqual([null, null]);
      // Without a session: 401.
      expectProblem(
        await t.http
          .put(
            `/v1/conversations/${conversation.id}/messages/${answer.id}/feedback`,
          )
          .send({ rating: 'down' }),
        401,
        'unauthenticated',
      );
      expectProblem(
        await t.http.delete(
          `/v1/conversations/${conversation.id}/messages/${answer.id}/feedback`,
        ),
        401,
        'unauthenticated',
      );
      expect((await feedbackOf(owner, conversation.id))[1]).toEqual(rated);
    });

    it('refuses a bad body with 400 naming the field (rating, tags, comment, unknown fields), changing nothing', async () => {
      const user = await registerUser(t.http);
      const conversation = await turn(
        user,
        [{ role: 'user', content: 'validate me' }],
        { expected: 2 },
      );
      const answer = conversation.messages[1];
      const rated = (
        await rate(user.cookie, conversation.id, answer.id, {
          rating: 'up',
          tags: ['kept'],
          comment: 'kept comment',
        }).expect(200)
      ).body as Feedback;

      const tags = /^tags(\.\d+|\[\d+\])?$/;
      const cases: [string, unknown, RegExp | string][] = [
        ['no rating', {}, 'rating'],
        ['rating missing, tags given', { tags: ['x'] }, 'rating'],
        ['rating not a choice', { rating: 'meh' }, 'rating'],
        ['rating upper case', { rating: 'UP' }, 'rating'],
        ['rating a number', { rating: 1 }, 'rating'],
        ['rating null', { rating: null }, 'rating'],
        [
          'eleven tags',
          {
            rating: 'up',
            tags: Array.from({ length: 11 }, (_, index) => `t${index}`),
          },
          tags,
        ],
        [
          'a tag of 41 characters',
          { rating: 'up', tags: ['x'.repeat(41)] },
          tags,
        ],
        ['an empty tag', { rating: 'up', tags: [''] }, tags],
        ['a blank tag', { rating: 'up', tags: ['   '] }, tags],
        ['a tag that is a number', { rating: 'up', tags: [1] }, tags],
        ['a tag that is an object', { rating: 'up', tags: [{ a: 1 }] }, tags],
        ['tags a string', { rating: 'up', tags: 'helpful' }, tags],
        [
          'a comment of 2001 characters',
          { rating: 'up', comment: 'c'.repeat(2001) },
          'comment',
        ],
        [
          'a comment of 2002 code points (variation selectors count)',
          { rating: 'up', comment: 'a\uFE0F'.repeat(1001) },
          'comment',
        ],
        ['a comment that is a number', { rating: 'up', comment: 5 }, 'comment'],
        ['an unknown field', { rating: 'up', stars: 5 }, 'stars'],
        [
          'a field of the DTO it answers',
          { rating: 'up', createdAt: 'x' },
          'createdAt',
        ],
      ];
      for (const [label, body, field] of cases) {
        const res = await rate(user.cookie, conversation.id, answer.id, body);
        expect({ label, status: res.status, code: res.body.code }).toEqual({
          label,
          status: 400,
          code: 'validation_failed',
        });
        expect(res.headers['content-type']).toMatch(
          /^application\/problem\+json/,
        );
        const fields = fieldsOf(res);
        expect({
          label,
          named:
            typeof field === 'string'
              ? fields.includes(field)
              : fields.some((name) => field.test(name)),
        }).toEqual({ label, named: true });
      }
      expect((await feedbackOf(user, conversation.id))[1]).toEqual(rated);
    });
  });

  it('the account export shows each message’s feedback (null when none)', async () => {
    const user = await registerUser(t.http);
    const conversation = await twoTurns(user, 'exported');
    const [, a1] = conversation.messages;
    const rated = (
      await rate(user.cookie, conversation.id, a1.id, {
        rating: 'down',
        tags: ['wrong'],
        comment: 'Not what I asked.',
      }).expect(200)
    ).body as Feedback;
    const res = await t.http
      .get('/v1/auth/me/export')
      .set('Cookie', user.cookie)
      .buffer(true)
      .parse((response, done) => {
        let text = '';
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => (text += chunk));
        response.on('end', () => done(null, text));
      })
      .expect(200);
    const doc = JSON.parse(res.body as string) as {
      conversations: {
        id: string;
        messages: { id: string; feedback: unknown }[];
      }[];
    };
    const exported = doc.conversations.find(
      (item) => item.id === conversation.id,
    );
    expect(exported).toBeDefined();
    expect(
      Object.fromEntries(
        exported!.messages.map((message) => [message.id, message.feedback]),
      ),
    ).toEqual(
      Object.fromEntries(
        conversation.messages.map((message) => [
          message.id,
          message.id === a1.id ? rated : null,
        ]),
      ),
    );
  });
});

/**
 * On a database of its own: the summary counts every rating of the service, and this block must know
 * them all.
 */
describe('GET /v1/admin/feedback', () => {
  const adminEmail = uniqueEmail('feedback-admin');
  let database: ScratchDatabase;
  let fake: FakeModelServer;
  let t: TestApp;
  let admin: User;
  const { turn, rate } = helpers(() => t);

  interface Summary {
    from: string | null;
    to: string | null;
    byModel: { model: string | null; up: number; down: number }[];
    bySkill: { skillId: string; skillName: string; up: number; down: number }[];
    comments: {
      messageId: string;
      rating: 'up' | 'down';
      tags: string[];
      comment: string;
      model: string | null;
      skillId: string | null;
      updatedAt: string;
    }[];
  }

  /** The ratings written in beforeAll, in the order written (the last write of each). */
  const written: Record<
    string,
    {
      messageId: string;
      feedback: Feedback;
      model: string;
      skillId: string | null;
    }
  > = {};
  let skillId: string;

  beforeAll(async () => {
    database = await createMigratedDatabase('chat_feedback_admin');
    fake = await new FakeModelServer().start();
    t = await bootTestApp({
      DATABASE_URL: database.url,
      ADMIN_EMAILS: adminEmail,
      OPENAI_API_KEY: 'sk-test',
      OPENAI_BASE_URL: fake.baseUrl,
    });
    admin = await registerVerifiedUser(t.http, {
      email: adminEmail,
      databaseUrl: database.url,
    });

    const alice = await registerUser(t.http);
    const bob = await registerUser(t.http);
    const answers = async (user: User, model: string, count: number) => {
      const found: { conversationId: string; messageId: string }[] = [];
      let conversationId: string | undefined;
      for (let index = 0; index < count; index += 1) {
        const conversation = await turn(
          user,
          [{ role: 'user', content: `${model} question ${index}` }],
          { model, conversationId, expected: (index + 1) * 2 },
        );
        conversationId = conversation.id;
        found.push({
          conversationId,
          messageId: conversation.messages.at(-1)!.id,
        });
      }
      return found;
    };
    const echo = await answers(alice, ECHO, 3);
    const openai = await answers(bob, OPENAI, 2);

    const skill = (
      await t.http
        .post('/v1/skills')
        .set('Cookie', alice.cookie)
        .send({ name: 'Summarizer', instruction: 'Summarize the text.' })
        .expect(201)
    ).body as { id: string };
    skillId = skill.id;
    const run = await t.http
      .post(`/v1/skills/${skill.id}/run`)
      .set('Cookie', alice.cookie)
      .send({ model: ECHO, input: 'skill input', idempotencyKey: randomUUID() })
      .expect(200);
    const skillConversation = run.headers['x-conversation-id'];
    let skillAnswer = '';
    await eventually(async () => {
      const conversation = (
        await t.http
          .get(`/v1/conversations/${skillConversation}`)
          .set('Cookie', alice.cookie)
          .expect(200)
      ).body as Conversation & { skillId: string | null };
      const last = conversation.messages.at(-1);
      if (last?.role !== 'assistant') return false;
      expect(conversation.skillId).toBe(skill.id);
      skillAnswer = last.id;
      return true;
    }, 15_000);

    const write = async (
      key: string,
      user: User,
      target: { conversationId: string; messageId: string },
      model: string,
      body: Record<string, unknown>,
      skill: string | null = null,
    ) => {
      // Distinct write times, so "latest first" and the time filters have one answer.
      await pause(10);
      const feedback = (
        await rate(
          user.cookie,
          target.conversationId,
          target.messageId,
          body,
        ).expect(200)
      ).body as Feedback;
      delete written[key];
      written[key] = {
        messageId: target.messageId,
        feedback,
        model,
        skillId: skill,
      };
    };
    await write('e1', alice, echo[0], ECHO, {
      rating: 'up',
      comment: 'first draft',
    });
    await write('e2', alice, echo[1], ECHO, { rating: 'up' });
    await write('e3', alice, echo[2], ECHO, {
      rating: 'down',
      tags: ['wrong', 'slow'],
      comment: 'echo was wrong',
    });
    await write('o1', bob, openai[0], OPENAI, {
      rating: 'up',
      comment: 'openai was fine',
    });
    await write('o2', bob, openai[1], OPENAI, { rating: 'down' });
    await write(
      's1',
      alice,
      { conversationId: skillConversation, messageId: skillAnswer },
      ECHO,
      { rating: 'down', tags: ['format'], comment: 'the skill missed' },
      skill.id,
    );
    // Rewritten last: it is now the latest rating, with its new comment.
    await write('e1', alice, echo[0], ECHO, {
      rating: 'up',
      comment: 'first, revised',
    });
  });
  afterAll(async () => {
    await t?.close();
    await fake?.close();
    await database?.drop();
  });

  const summary = (query: Record<string, string | number> = {}) =>
    t.http.get('/v1/admin/feedback').query(query).set('Cookie', admin.cookie);
  const comment = (key: string) => ({
    messageId: written[key].messageId,
    rating: written[key].feedback.rating,
    tags: written[key].feedback.tags,
    comment: written[key].feedback.comment,
    model: written[key].model,
    skillId: written[key].skillId,
    updatedAt: written[key].feedback.updatedAt,
  });

  it('counts ratings per model (most first) and per Skill, and lists the latest comments first', async () => {
    const res = await summary().expect(200);
    expect(res.body as Summary).toEqual({
      from: null,
      to: null,
      byModel: [
        { model: ECHO, up: 2, down: 2 },
        { model: OPENAI, up: 1, down: 1 },
      ],
      bySkill: [{ skillId, skillName: 'Summarizer', up: 0, down: 1 }],
      // Only ratings with a comment; e1 was rewritten last, with its new comment.
      comments: [comment('e1'), comment('s1'), comment('o1'), comment('e3')],
    });
    expect(comment('e1').comment).toBe('first, revised');
  });

  it('lists at most `limit` comments, and refuses a limit out of 1..100 with 400', async () => {
    expect(
      ((await summary({ limit: 2 }).expect(200)).body as Summary).comments,
    ).toEqual([comment('e1'), comment('s1')]);
    expect(
      ((await summary({ limit: 1 }).expect(200)).body as Summary).comments,
    ).toEqual([comment('e1')]);
    expect(
      ((await summary({ limit: 100 }).expect(200)).body as Summary).comments,
    ).toHaveLength(4);
    for (const limit of [0, 101, 'ten', -1]) {
      const res = await summary({ limit });
      expectProblem(res, 400, 'validation_failed');
      expect(fieldsOf(res)).toContain('limit');
    }
  });

  it('filters by model (exact catalog id)', async () => {
    const openai = (await summary({ model: OPENAI }).expect(200))
      .body as Summary;
    expect(openai).toEqual({
      from: null,
      to: null,
      byModel: [{ model: OPENAI, up: 1, down: 1 }],
      bySkill: [],
      comments: [comment('o1')],
    });
    const echo = (await summary({ model: ECHO }).expect(200)).body as Summary;
    expect(echo.byModel).toEqual([{ model: ECHO, up: 2, down: 2 }]);
    expect(echo.bySkill).toEqual([
      { skillId, skillName: 'Summarizer', up: 0, down: 1 },
    ]);
    expect(echo.comments).toEqual([
      comment('e1'),
      comment('s1'),
      comment('e3'),
    ]);
  });

  it('filters on when the rating was last written: from inclusive, to exclusive; from after to is 400', async () => {
    const at = written.o1.feedback.updatedAt;
    // From o1's write on: o1, o2, s1 and the rewritten e1.
    const since = (await summary({ from: at }).expect(200)).body as Summary;
    expect(Date.parse(since.from!)).toBe(Date.parse(at));
    expect(since.to).toBeNull();
    expect(since.byModel).toEqual(
      expect.arrayContaining([
        { model: OPENAI, up: 1, down: 1 },
        { model: ECHO, up: 1, down: 1 },
      ]),
    );
    expect(since.byModel).toHaveLength(2);
    expect(since.comments).toEqual([
      comment('e1'),
      comment('s1'),
      comment('o1'),
    ]);

    // Before o1's write: e2 and e3 only (e1 was last written after).
    const before = (await summary({ to: at }).expect(200)).body as Summary;
    expect(before.from).toBeNull();
    expect(Date.parse(before.to!)).toBe(Date.parse(at));
    expect(before.byModel).toEqual([{ model: ECHO, up: 1, down: 1 }]);
    expect(before.bySkill).toEqual([]);
    expect(before.comments).toEqual([comment('e3')]);

    // Exactly o1's instant: [at, at + 1 ms).
    const instant = (
      await summary({
        from: at,
        to: new Date(Date.parse(at) + 1).toISOString(),
      }).expect(200)
    ).body as Summary;
    expect(instant.byModel).toEqual([{ model: OPENAI, up: 1, down: 0 }]);
    expect(instant.comments).toEqual([comment('o1')]);

    // Plain dates are accepted: a day long past and a day far ahead.
    const everything = (
      await summary({ from: '2000-01-01', to: '2999-01-01' }).expect(200)
    ).body as Summary;
    expect(Date.parse(everything.from!)).toBe(Date.parse('2000-01-01'));
    expect(everything.comments).toHaveLength(4);
    const nothing = (await summary({ from: '2999-01-01' }).expect(200))
      .body as Summary;
    expect(nothing).toEqual({
      from: expect.any(String),
      to: null,
      byModel: [],
      bySkill: [],
      comments: [],
    });

    // The last day there is bounds nothing (its next day has no ISO form).
    const last = (await summary({ to: '9999-12-31' }).expect(200))
      .body as Summary;
    expect(last.to).toBeNull();
    expect(last.comments).toHaveLength(4);

    const reversed = await summary({ from: '2026-02-01', to: '2026-01-01' });
    expectProblem(reversed, 400, 'validation_failed');
    for (const query of [
      { from: 'yesterday' },
      { to: '2026-13-45' },
      { from: '0000-01-01' },
      { from: '0000-01-01T00:30+01:00' },
      { from: '2026-02-31T10:00Z' },
      { to: '2026-02-30' },
    ] as Record<string, string>[]) {
      const res = await summary(query);
      expect({ query, status: res.status }).toEqual({ query, status: 400 });
    }
  });

  it('is for admins only: 401 signed out, 403 for a signed-in user', async () => {
    expectProblem(
      await t.http.get('/v1/admin/feedback'),
      401,
      'unauthenticated',
    );
    const user = await registerVerifiedUser(t.http, {
      databaseUrl: database.url,
    });
    expectProblem(
      await t.http.get('/v1/admin/feedback').set('Cookie', user.cookie),
      403,
      'forbidden',
    );
  });

  // Last: it adds ratings the tests above do not expect.
  it('lists 20 comments when no limit is given', async () => {
    const user = await registerUser(t.http);
    let conversationId: string | undefined;
    const rated: string[] = [];
    for (let index = 0; index < 21; index += 1) {
      const conversation = await turn(
        user,
        [{ role: 'user', content: `many ${index}` }],
        { conversationId, expected: (index + 1) * 2 },
      );
      conversationId = conversation.id;
      const answer = conversation.messages.at(-1)!;
      await pause(2);
      await rate(user.cookie, conversation.id, answer.id, {
        rating: 'up',
        comment: `comment ${index}`,
      }).expect(200);
      rated.push(answer.id);
    }
    const comments = ((await summary().expect(200)).body as Summary).comments;
    expect(comments.map((entry) => entry.messageId)).toEqual(
      rated.slice(1).reverse(),
    );
  });
});

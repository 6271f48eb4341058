import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { TextExtractionService } from '../src/files/extraction/text-extraction.service';
import { eventually } from './support/eventually';
import { registerUser } from './support/factories';
import { buildPdf } from './support/pdf';
import { sql } from './support/sql';
import { bootTestApp, extractionEnv, TestApp } from './support/test-app';
import { buildDocxWithText, buildZip } from './support/zip';

describe('files: reading back and extracted text', () => {
  let t: TestApp;
  let storageDir: string;
  beforeAll(async () => {
    storageDir = extractionEnv().STORAGE_DIR;
    t = await bootTestApp(extractionEnv());
  });
  afterAll(async () => {
    await t.close();
  });

  const upload = async (cookie: string, content: Buffer, name: string) => {
    const res = await t.http
      .post('/v1/files')
      .set('Cookie', cookie)
      .attach('file', content, name);
    expect({
      name,
      status: res.status,
      body: res.status === 201 ? undefined : res.body,
    }).toEqual({ name, status: 201, body: undefined });
    return res.body as { id: string; text: { status: string } };
  };

  /** The file once its extraction has ended (ready or failed). */
  async function settled(cookie: string, id: string) {
    let body:
      | {
          text: {
            status: string;
            chars: number | null;
            pages: number | null;
            error: string | null;
          };
        }
      | undefined;
    await eventually(async () => {
      body = (
        await t.http.get(`/v1/files/${id}`).set('Cookie', cookie).expect(200)
      ).body;
      return body!.text.status !== 'pending';
    }, 20_000);
    return body!;
  }

  const storedText = async (id: string) =>
    (
      await sql<{ text: string }>(
        `SELECT string_agg(text, '' ORDER BY index) AS text FROM "FileChunk" WHERE "fileId" = $1`,
        [id],
      )
    )[0]?.text ?? null;

  it('extracts text in the background from text (BOM, UTF-16), Markdown, PDF and DOCX', async () => {
    const user = await registerUser(t.http);
    const cases: [Buffer, string, string, number | null][] = [
      [
        Buffer.from('\ufeffplain text with a BOM'),
        'bom.txt',
        'plain text with a BOM',
        null,
      ],
      [
        Buffer.concat([
          Buffer.from([0xff, 0xfe]),
          Buffer.from('UTF-16 text: ünïcödé', 'utf16le'),
        ]),
        'wide.txt',
        'UTF-16 text: ünïcödé',
        null,
      ],
      [
        Buffer.from('# Title\n\nSome *Markdown*.'),
        'notes.md',
        '# Title\n\nSome *Markdown*.',
        null,
      ],
      [
        buildPdf(['First page line one\nline two', 'Second page']),
        'report.pdf',
        'First page line one\nline two\n\nSecond page',
        2,
      ],
      [
        buildDocxWithText(['A Word paragraph.', 'Another one & more.']),
        'letter.docx',
        'A Word paragraph.\n\nAnother one & more.',
        null,
      ],
    ];
    for (const [content, name, text, pages] of cases) {
      const file = await upload(user.cookie, content, name);
      // The upload answers at once; extraction starts after it.
      expect(file.text).toEqual({
        status: 'pending',
        chars: null,
        pages: null,
        error: null,
      });
      const done = await settled(user.cookie, file.id);
      expect({ name, text: done.text }).toEqual({
        name,
        text: { status: 'ready', chars: text.length, pages, error: null },
      });
      expect(await storedText(file.id)).toBe(text);
    }
  }, 60_000);

  it('ends as failed with a code for an encrypted PDF, a PDF without text, and a broken DOCX, and keeps serving', async () => {
    const user = await registerUser(t.http);
    const brokenDocx = buildZip([
      { name: '[Content_Types].xml', data: Buffer.from('<Types/>') },
      { name: 'word/document.xml', data: Buffer.from('<w:document><not xml') },
    ]);
    for (const [content, name, code] of [
      [
        buildPdf(['secret'], { encrypted: true }),
        'locked.pdf',
        'pdf_encrypted',
      ],
      [buildPdf(['scan'], { textless: true }), 'scan.pdf', 'pdf_no_text'],
      [
        Buffer.concat([Buffer.from('%PDF-1.7\n'), Buffer.alloc(2000, 0x20)]),
        'broken.pdf',
        'file_unreadable',
      ],
      [brokenDocx, 'broken.docx', 'file_unreadable'],
    ] as const) {
      const file = await upload(user.cookie, content, name);
      expect({
        name,
        text: (await settled(user.cookie, file.id)).text,
      }).toEqual({
        name,
        text: { status: 'failed', chars: null, pages: null, error: code },
      });
    }
    expect((await t.http.get('/v1/health/live')).status).toBe(200);
  }, 60_000);

  it('returns the original bytes as an attachment, streamed from the storage, only to the owner', async () => {
    const owner = await registerUser(t.http);
    const other = await registerUser(t.http);
    const content = buildPdf(['Download me']);
    const file = await upload(owner.cookie, content, 'Résumé 2026 "final".pdf');
    const res = await t.http
      .get(`/v1/files/${file.id}/content`)
      .set('Cookie', owner.cookie)
      .buffer(true)
      .parse((response, done) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () => done(null, Buffer.concat(chunks)));
      });
    expect(res.status).toBe(200);
    expect((res.body as Buffer).equals(content)).toBe(true);
    expect(res.headers['content-type']).toBe('application/pdf');
    expect(res.headers['content-length']).toBe(String(content.length));
    expect(res.headers['content-disposition']).toBe(
      `attachment; filename="R_sum_ 2026 \\"final\\".pdf"; filename*=UTF-8''R%C3%A9sum%C3%A9%202026%20%22final%22.pdf`,
    );
    expect(res.headers['x-content-type-options']).toBe('nosniff');
    expect(res.headers['cache-control']).toBe('private');

    for (const [cookie, id] of [
      [other.cookie, file.id],
      [owner.cookie, '00000000-0000-0000-0000-000000000000'],
      [owner.cookie, 'nope'],
    ]) {
      for (const path of [`/v1/files/${id}`, `/v1/files/${id}/content`]) {
        const refused = await t.http.get(path).set('Cookie', cookie);
        expect({
          path,
          status: refused.status,
          type: refused.headers['content-type'],
        }).toEqual({
          path,
          status: 404,
          type: expect.stringContaining('application/problem+json'),
        });
      }
    }
    expect((await t.http.get(`/v1/files/${file.id}`)).status).toBe(401);
  });

  it('takes up files left pending by an instance that crashed, once their claim has run out', async () => {
    const user = await registerUser(t.http);
    const file = await upload(
      user.cookie,
      Buffer.from('recovered text'),
      'again.txt',
    );
    await settled(user.cookie, file.id);
    await sql(`DELETE FROM "FileChunk" WHERE "fileId" = $1`, [file.id]);
    await sql(
      `UPDATE "File" SET "textStatus" = 'pending', "textChars" = NULL, "textClaimedUntil" = now() - interval '1 second' WHERE id = $1`,
      [file.id],
    );
    t.app.get(TextExtractionService).kick();
    expect((await settled(user.cookie, file.id)).text.status).toBe('ready');
    expect(await storedText(file.id)).toBe('recovered text');
  });

  it('fails a file whose object is gone (file_missing), and one whose extraction keeps dying (after three attempts)', async () => {
    const user = await registerUser(t.http);
    const gone = await upload(
      user.cookie,
      Buffer.from('soon gone'),
      'gone.txt',
    );
    const dying = await upload(
      user.cookie,
      Buffer.from('never extracted'),
      'dying.txt',
    );
    await settled(user.cookie, gone.id);
    await settled(user.cookie, dying.id);
    const [{ storageKey }] = await sql<{ storageKey: string }>(
      `SELECT "storageKey" FROM "File" WHERE id = $1`,
      [gone.id],
    );
    rmSync(join(storageDir, storageKey));
    await sql(`DELETE FROM "FileChunk" WHERE "fileId" = ANY($1::uuid[])`, [
      [gone.id, dying.id],
    ]);
    await sql(
      `UPDATE "File" SET "textStatus" = 'pending', "textClaimedUntil" = NULL, "textAttempts" = 0 WHERE id = $1`,
      [gone.id],
    );
    // Three claims already taken, each by a process that died before an outcome.
    await sql(
      `UPDATE "File" SET "textStatus" = 'pending', "textClaimedUntil" = now() - interval '1 second', "textAttempts" = 3 WHERE id = $1`,
      [dying.id],
    );
    t.app.get(TextExtractionService).kick();
    expect((await settled(user.cookie, gone.id)).text).toEqual({
      status: 'failed',
      chars: expect.any(Number),
      pages: null,
      error: 'file_missing',
    });
    expect((await settled(user.cookie, dying.id)).text).toEqual({
      status: 'failed',
      chars: expect.any(Number),
      pages: null,
      error: 'extraction_failed',
    });
    expect(
      (
        await t.http
          .get(`/v1/files/${gone.id}/content`)
          .set('Cookie', user.cookie)
      ).status,
    ).toBe(404);
  });
});

import { randomUUID } from 'node:crypto';
import { connect } from 'node:net';
import {
  mkdirSync,
  mkdtempSync,
  readdirSync,
  rmSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { deflateRawSync } from 'node:zlib';
import { listen } from './support/chat-client';
import { FilesService } from '../src/files/files.service';
import { registerUser } from './support/factories';
import { sql } from './support/sql';
import { bootTestApp, TestApp } from './support/test-app';
import { buildDocx, buildZip } from './support/zip';

const LIMIT = 20 * 1024 * 1024;
const pdf = (size: number) =>
  Buffer.concat([
    Buffer.from('%PDF-'),
    Buffer.alloc(Math.max(0, size - 5), 0x20),
  ]);
const text = (size: number) => Buffer.alloc(size, 0x61);

/** Every file under a directory, relative, recursively. */
function filesUnder(dir: string): string[] {
  try {
    return readdirSync(dir, { recursive: true, withFileTypes: true })
      .filter((entry) => entry.isFile())
      .map((entry) =>
        join(entry.parentPath ?? entry.path, entry.name).slice(dir.length + 1),
      );
  } catch {
    return [];
  }
}

describe('files', () => {
  let t: TestApp;
  let storageDir: string;
  beforeAll(async () => {
    storageDir = mkdtempSync(join(tmpdir(), 'chat-files-'));
    t = await bootTestApp({ STORAGE_DIR: storageDir });
  });
  afterAll(async () => {
    await t.close();
    rmSync(storageDir, { recursive: true, force: true });
  });

  const upload = (
    cookie: string,
    content: Buffer,
    name: string,
    contentType = 'application/octet-stream',
  ) =>
    t.http
      .post('/v1/files')
      .set('Cookie', cookie)
      .attach('file', content, { filename: name, contentType });

  it('accepts each kind at its smallest and at exactly 20 MiB, deciding the kind from the content', async () => {
    const user = await registerUser(t.http);
    const cases: [Buffer, string, string, string][] = [
      [text(1), 'a.txt', 'text', 'text/plain; charset=utf-8'],
      [text(1), 'noext', 'text', 'text/plain; charset=utf-8'],
      [text(1), 'a.md', 'markdown', 'text/markdown; charset=utf-8'],
      [
        Buffer.from('# Titel — ünïcode ✓\n'),
        'notes.markdown',
        'markdown',
        'text/markdown; charset=utf-8',
      ],
      [pdf(5), 'a.pdf', 'pdf', 'application/pdf'],
      [
        buildDocx(),
        'a.docx',
        'docx',
        'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
      ],
      [text(LIMIT), 'big.txt', 'text', 'text/plain; charset=utf-8'],
      [text(LIMIT), 'big.md', 'markdown', 'text/markdown; charset=utf-8'],
      [pdf(LIMIT), 'big.pdf', 'pdf', 'application/pdf'],
      [
        buildDocx(LIMIT),
        'big.docx',
        'docx',
        'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
      ],
    ];
    for (const [content, name, kind, mediaType] of cases) {
      // The client's Content-Type is ignored: always a lie here.
      const res = await upload(user.cookie, content, name, 'image/png');
      expect({
        name,
        status: res.status,
        body: res.status === 201 ? undefined : res.body,
      }).toEqual({ name, status: 201, body: undefined });
      expect(res.body).toEqual({
        id: expect.any(String),
        name,
        kind,
        mediaType,
        sizeBytes: content.length,
        sha256: expect.stringMatching(/^[0-9a-f]{64}$/),
        createdAt: expect.any(String),
        text: { status: 'pending', chars: null, pages: null, error: null },
      });
    }
    expect(filesUnder(join(storageDir, user.id))).toHaveLength(cases.length);
    expect(filesUnder(join(storageDir, '.uploads'))).toEqual([]);
  }, 60_000);

  it('refuses 20 MiB + 1 byte with 413 while streaming, leaving no object, record or temporary file', async () => {
    const user = await registerUser(t.http);
    for (const [content, name] of [
      [text(LIMIT + 1), 'big.txt'],
      [pdf(LIMIT + 1), 'big.pdf'],
      [buildDocx(LIMIT + 1), 'big.docx'],
    ] as const) {
      const res = await upload(user.cookie, content, name);
      expect({ name, status: res.status, code: res.body.code }).toEqual({
        name,
        status: 413,
        code: 'payload_too_large',
      });
    }
    expect(filesUnder(join(storageDir, user.id))).toEqual([]);
    expect(filesUnder(join(storageDir, '.uploads'))).toEqual([]);
    expect(
      await sql(`SELECT 1 FROM "File" WHERE "ownerId" = $1`, [user.id]),
    ).toHaveLength(0);
  }, 60_000);

  it('refuses content that is not an accepted kind, or contradicts its extension, with 415 naming the kinds', async () => {
    const user = await registerUser(t.http);
    const png = Buffer.from('89504e470d0a1a0a0000000d49484452', 'hex');
    const cases: [Buffer, string][] = [
      [png, 'image.png'],
      [png, 'image.txt'],
      [pdf(100), 'renamed.txt'],
      [pdf(100), 'renamed.docx'],
      [text(10), 'fake.pdf'],
      [text(10), 'fake.docx'],
      [buildDocx(), 'renamed.pdf'],
      [buildDocx(), 'renamed.md'],
      [Buffer.from([0x61, 0xff, 0xfe, 0x62]), 'invalid.txt'],
      [Buffer.from([0x61, 0xe2, 0x82]), 'truncated.md'],
      [Buffer.from('nul\u0000inside'), 'nul.txt'],
      [text(10), 'script.sh'],
      [
        buildZip([{ name: 'readme.txt', data: Buffer.from('not a docx') }]),
        'nodoc.docx',
      ],
      [
        Buffer.concat([Buffer.from('PK\u0003\u0004'), text(100)]),
        'broken.docx',
      ],
    ];
    for (const [content, name] of cases) {
      const res = await upload(user.cookie, content, name);
      expect({ name, status: res.status, code: res.body.code }).toEqual({
        name,
        status: 415,
        code: 'unsupported_media_type',
      });
      expect(res.body.detail).toContain('PDF');
    }
    expect(
      await sql(`SELECT 1 FROM "File" WHERE "ownerId" = $1`, [user.id]),
    ).toHaveLength(0);
    expect(filesUnder(join(storageDir, '.uploads'))).toEqual([]);
  });

  it('inspects a zip bomb without expanding it', async () => {
    const user = await registerUser(t.http);
    // 200 MiB of zeros deflate to about 200 KiB.
    const bomb = buildZip([
      { name: '[Content_Types].xml', data: Buffer.from('<Types/>') },
      {
        name: 'word/document.xml',
        data: Buffer.alloc(200 * 1024 * 1024),
        deflate: true,
      },
    ]);
    expect(bomb.length).toBeLessThan(1024 * 1024);
    const res = await upload(user.cookie, bomb, 'bomb.docx');
    expect(res.status).toBe(415);
    expect(res.body.detail).toContain('zip bomb');
    expect(deflateRawSync).toBeDefined();
  }, 30_000);

  it('refuses a missing file, a second file, other fields and non-multipart bodies with 400/415', async () => {
    const user = await registerUser(t.http);
    const noFile = await t.http
      .post('/v1/files')
      .set('Cookie', user.cookie)
      .field('other', 'x');
    expect(noFile.status).toBe(400);
    const empty = await t.http
      .post('/v1/files')
      .set('Cookie', user.cookie)
      .set('Content-Type', 'multipart/form-data; boundary=xyz')
      .send('--xyz--\r\n');
    expect(empty.status).toBe(400);
    expect(empty.body.detail).toContain('"file"');
    const two = await t.http
      .post('/v1/files')
      .set('Cookie', user.cookie)
      .attach('file', text(3), 'a.txt')
      .attach('file', text(3), 'b.txt');
    expect(two.status).toBe(400);
    const wrongField = await t.http
      .post('/v1/files')
      .set('Cookie', user.cookie)
      .attach('document', text(3), 'a.txt');
    expect(wrongField.status).toBe(400);
    const extra = await t.http
      .post('/v1/files')
      .set('Cookie', user.cookie)
      .field('note', 'hi')
      .attach('file', text(3), 'a.txt');
    expect(extra.status).toBe(400);
    const zero = await upload(user.cookie, Buffer.alloc(0), 'empty.txt');
    expect(zero.status).toBe(400);
    const json = await t.http
      .post('/v1/files')
      .set('Cookie', user.cookie)
      .send({ file: 'x' });
    expect(json.status).toBe(415);
    const noBoundary = await t.http
      .post('/v1/files')
      .set('Cookie', user.cookie)
      .set('Content-Type', 'multipart/form-data')
      .send('x');
    expect(noBoundary.status).toBe(400);
    for (const res of [
      noFile,
      empty,
      two,
      wrongField,
      extra,
      zero,
      json,
      noBoundary,
    ])
      expect(res.headers['content-type']).toContain('application/problem+json');
    expect(
      await sql(`SELECT 1 FROM "File" WHERE "ownerId" = $1`, [user.id]),
    ).toHaveLength(0);
    expect(filesUnder(join(storageDir, user.id))).toEqual([]);
    expect(filesUnder(join(storageDir, '.uploads'))).toEqual([]);
  });

  it('stores a sanitized name and the content hash', async () => {
    const user = await registerUser(t.http);
    const res = await upload(
      user.cookie,
      Buffer.from('hello'),
      '../../etc/pass\u202Ewd.txt',
    );
    expect(res.status).toBe(201);
    expect(res.body.name).toBe('passwd.txt');
    expect(res.body.sha256).toBe(
      '2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824',
    );
  });

  it('lists only the caller’s files, newest first, and deletes only theirs', async () => {
    const owner = await registerUser(t.http);
    const other = await registerUser(t.http);
    const ids = [];
    for (const name of ['1.txt', '2.txt', '3.txt'])
      ids.push((await upload(owner.cookie, text(3), name)).body.id);
    await upload(other.cookie, text(3), 'foreign.txt');
    const first = await t.http
      .get('/v1/files')
      .query({ limit: 2 })
      .set('Cookie', owner.cookie)
      .expect(200);
    const second = await t.http
      .get('/v1/files')
      .query({ limit: 2, cursor: first.body.nextCursor })
      .set('Cookie', owner.cookie)
      .expect(200);
    expect(
      [...first.body.data, ...second.body.data].map(
        (file: { name: string }) => file.name,
      ),
    ).toEqual(['3.txt', '2.txt', '1.txt']);
    expect(second.body.nextCursor).toBeNull();
    const bodies = [];
    for (const id of [ids[0], randomUUID(), 'nope']) {
      const res = await t.http
        .delete(`/v1/files/${id}`)
        .set('Cookie', other.cookie);
      expect(res.status).toBe(404);
      bodies.push({ ...res.body, requestId: undefined });
    }
    expect(new Set(bodies.map((body) => JSON.stringify(body))).size).toBe(1);
    await t.http
      .delete(`/v1/files/${ids[0]}`)
      .set('Cookie', owner.cookie)
      .expect(204);
    await t.http
      .delete(`/v1/files/${ids[0]}`)
      .set('Cookie', owner.cookie)
      .expect(404);
    expect(filesUnder(join(storageDir, owner.id))).toHaveLength(2);
  });

  it('keeps the record when the object cannot be deleted (503), and a retry completes the deletion', async () => {
    const user = await registerUser(t.http);
    const file = (await upload(user.cookie, text(3), 'stuck.txt')).body;
    const [row] = await sql<{ storageKey: string }>(
      `SELECT "storageKey" FROM "File" WHERE id = $1`,
      [file.id],
    );
    const objectPath = join(storageDir, row.storageKey);
    // The object path becomes a non-empty directory: unlink fails as a broken disk or bucket would.
    rmSync(objectPath);
    mkdirSync(objectPath);
    writeFileSync(join(objectPath, 'blocker'), 'x');
    const failed = await t.http
      .delete(`/v1/files/${file.id}`)
      .set('Cookie', user.cookie);
    expect(failed.status).toBe(503);
    expect(failed.body.code).toBe('storage_unavailable');
    const listed = await t.http
      .get('/v1/files')
      .set('Cookie', user.cookie)
      .expect(200);
    expect(listed.body.data.map((entry: { id: string }) => entry.id)).toEqual([
      file.id,
    ]);
    rmSync(objectPath, { recursive: true });
    writeFileSync(objectPath, 'abc');
    await t.http
      .delete(`/v1/files/${file.id}`)
      .set('Cookie', user.cookie)
      .expect(204);
    expect(filesUnder(join(storageDir, user.id))).toEqual([]);
    await t.http
      .delete(`/v1/files/${file.id}`)
      .set('Cookie', user.cookie)
      .expect(404);
  });

  it('enforces the plan’s storage quota, also for uploads finishing together', async () => {
    const user = await registerUser(t.http);
    const [plan] = await sql<{ quota: string }>(
      `SELECT "storageQuotaBytes"::text AS quota FROM "Plan" WHERE code = 'free'`,
    );
    const quota = Number(plan.quota);
    await sql(
      `INSERT INTO "File" (id, "ownerId", "storageKey", "originalName", kind, "mediaType", "sizeBytes", sha256) VALUES ($1, $2, $3, 'filler', 'text', 'text/plain', $4, $5)`,
      [
        randomUUID(),
        user.id,
        `filler/${randomUUID()}`,
        quota - 15,
        '0'.repeat(64),
      ],
    );
    const tooBig = await upload(user.cookie, text(16), 'over.txt');
    expect(tooBig.status).toBe(413);
    expect(tooBig.body.code).toBe('storage_quota_exceeded');
    const both = await Promise.all([
      upload(user.cookie, text(10), 'a.txt'),
      upload(user.cookie, text(10), 'b.txt'),
    ]);
    expect(both.map((res) => res.status).sort()).toEqual([201, 413]);
    expect(filesUnder(join(storageDir, user.id))).toHaveLength(1);
  });

  it('removes temporary uploads a crashed process left behind, at start', async () => {
    const tempDir = join(storageDir, '.uploads');
    mkdirSync(tempDir, { recursive: true });
    writeFileSync(join(tempDir, 'left-by-crash'), 'x');
    const old = new Date(Date.now() - 2 * 60 * 60 * 1000);
    utimesSync(join(tempDir, 'left-by-crash'), old, old);
    writeFileSync(join(tempDir, 'in-progress'), 'x');
    await t.app.get(FilesService).onModuleInit();
    expect(filesUnder(tempDir)).toEqual(['in-progress']);
    rmSync(join(tempDir, 'in-progress'));
  });

  it('requires a session', async () => {
    expect((await t.http.get('/v1/files')).status).toBe(401);
    expect(
      (await t.http.post('/v1/files').attach('file', text(3), 'a.txt')).status,
    ).toBe(401);
  });

  describe('over raw sockets', () => {
    const boundary = 'raw-boundary';
    const head = (cookie: string, length?: number) =>
      `POST /v1/files HTTP/1.1\r\nHost: localhost\r\nCookie: ${cookie}\r\nContent-Type: multipart/form-data; boundary=${boundary}\r\n` +
      (length === undefined
        ? 'Transfer-Encoding: chunked\r\n'
        : `Content-Length: ${length}\r\n`) +
      'Connection: close\r\n\r\n';
    const partHead = `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="big.txt"\r\nContent-Type: text/plain\r\n\r\n`;
    const tail = `\r\n--${boundary}--\r\n`;

    async function waitForNoTempFiles(): Promise<void> {
      const deadline = Date.now() + 5_000;
      while (filesUnder(join(storageDir, '.uploads')).length > 0) {
        if (Date.now() > deadline)
          throw new Error(
            `temporary files left: ${filesUnder(join(storageDir, '.uploads')).join(', ')}`,
          );
        await new Promise((done) => setTimeout(done, 50));
      }
    }

    function rawUpload(
      port: number,
      chunks: { data: Buffer | string; delayMs?: number }[],
    ): Promise<string> {
      return new Promise((resolve) => {
        const socket = connect(port, '127.0.0.1');
        let answer = '';
        socket.on('data', (data) => (answer += data.toString('latin1')));
        socket.on('error', () => undefined);
        socket.on('close', () => resolve(answer));
        void (async () => {
          for (const chunk of chunks) {
            if (chunk.delayMs)
              await new Promise((done) => setTimeout(done, chunk.delayMs));
            if (socket.destroyed) return;
            socket.write(chunk.data);
          }
        })();
      });
    }

    it('answers 413 at once for a body far over the limit, and when the closing boundary comes late', async () => {
      const user = await registerUser(t.http);
      const port = Number(new URL(await listen(t)).port);
      const big = Buffer.alloc(25 * 1024 * 1024, 0x61);
      const started = Date.now();
      const far = await rawUpload(port, [
        {
          data:
            head(user.cookie, partHead.length + big.length + tail.length) +
            partHead,
        },
        { data: big },
        { data: tail },
      ]);
      expect(far).toMatch(/^HTTP\/1\.1 413/);
      expect(Date.now() - started).toBeLessThan(10_000);
      const exact = Buffer.alloc(LIMIT + 1, 0x61);
      const late = await rawUpload(port, [
        {
          data:
            head(user.cookie, partHead.length + exact.length + tail.length) +
            partHead,
        },
        { data: exact },
        { data: tail, delayMs: 1_000 },
      ]);
      expect(late).toMatch(/^HTTP\/1\.1 413/);
      await waitForNoTempFiles();
      expect(
        await sql(`SELECT 1 FROM "File" WHERE "ownerId" = $1`, [user.id]),
      ).toHaveLength(0);
    }, 30_000);

    it('leaves nothing behind when the client goes away mid-file', async () => {
      const user = await registerUser(t.http);
      const port = Number(new URL(await listen(t)).port);
      const socket = connect(port, '127.0.0.1');
      socket.on('error', () => undefined);
      await new Promise<void>((done) => socket.once('connect', () => done()));
      socket.write(head(user.cookie, 10 * 1024 * 1024) + partHead);
      socket.write(Buffer.alloc(1024 * 1024, 0x61));
      await new Promise((done) => setTimeout(done, 300));
      socket.destroy();
      await waitForNoTempFiles();
      expect(
        await sql(`SELECT 1 FROM "File" WHERE "ownerId" = $1`, [user.id]),
      ).toHaveLength(0);
      expect((await t.http.get('/v1/health/live')).status).toBe(200);
    });

    it('refuses a crafted cursor with 400', async () => {
      const user = await registerUser(t.http);
      for (const raw of [
        `2020-01-01T00:00:00.000Z|${'-'.repeat(36)}`,
        `2020-01-01T00:00:00.000Z|${'a'.repeat(36)}`,
        `-200000-01-01T00:00:00.000Z|${randomUUID()}`,
      ]) {
        const res = await t.http
          .get('/v1/files')
          .query({ cursor: Buffer.from(raw).toString('base64url') })
          .set('Cookie', user.cookie);
        expect(res.status).toBe(400);
      }
    });
  });
});

import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import S3rver from 's3rver';
import {
  OBJECT_STORAGE,
  ObjectStorage,
} from '../src/infra/storage/object-storage';
import { registerUser } from './support/factories';
import { sql } from './support/sql';
import { bootTestApp, TestApp } from './support/test-app';

const BUCKET = 'uploads';

async function startS3(
  directory: string,
  port = 0,
): Promise<{ server: S3rver; port: number }> {
  const server = new S3rver({
    port,
    address: '127.0.0.1',
    silent: true,
    directory,
    configureBuckets: [{ name: BUCKET, configs: [] }],
  });
  const address = await server.run();
  return { server, port: address.port };
}

async function bytesOf(stream: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/** The S3 driver against a local S3-compatible server (s3rver speaks the S3 REST protocol on loopback). */
describe('files on S3-compatible storage', () => {
  let t: TestApp;
  let s3: { server: S3rver; port: number };
  let s3Dir: string;
  let storageDir: string;
  let storage: ObjectStorage;
  beforeAll(async () => {
    s3Dir = mkdtempSync(join(tmpdir(), 'chat-s3-'));
    storageDir = mkdtempSync(join(tmpdir(), 'chat-s3-local-'));
    s3 = await startS3(s3Dir);
    t = await bootTestApp({
      STORAGE_DIR: storageDir,
      S3_BUCKET: BUCKET,
      S3_ENDPOINT: `http://127.0.0.1:${s3.port}`,
      S3_REGION: 'us-east-1',
      S3_FORCE_PATH_STYLE: 'true',
      S3_ACCESS_KEY_ID: 'S3RVER',
      S3_SECRET_ACCESS_KEY: 'S3RVER',
    });
    storage = t.app.get<ObjectStorage>(OBJECT_STORAGE);
  });
  afterAll(async () => {
    await t.close();
    await s3.server.close().catch(() => undefined);
    rmSync(s3Dir, { recursive: true, force: true });
    rmSync(storageDir, { recursive: true, force: true });
  });

  /** The objects s3rver holds under a user's prefix (it keeps each as several files: object, md5, metadata). */
  const bucketEntriesOf = (userId: string) => {
    try {
      return [
        ...new Set(
          readdirSync(join(s3Dir, BUCKET, userId)).map(
            (entry) => entry.split('._S3rver')[0],
          ),
        ),
      ];
    } catch {
      return [];
    }
  };
  const keyOf = async (id: string) =>
    (
      await sql<{ storageKey: string }>(
        `SELECT "storageKey" FROM "File" WHERE id = $1`,
        [id],
      )
    )[0]?.storageKey;

  it('streams uploads into the bucket and deletes them, keeping nothing on local disk', async () => {
    expect(storage.driver).toBe('s3');
    const user = await registerUser(t.http);
    const content = Buffer.concat([
      Buffer.from('%PDF-1.7\n'),
      Buffer.alloc(3 * 1024 * 1024, 0x20),
    ]);
    const res = await t.http
      .post('/v1/files')
      .set('Cookie', user.cookie)
      .attach('file', content, 'report.pdf')
      .expect(201);
    expect(res.body).toEqual(
      expect.objectContaining({ kind: 'pdf', sizeBytes: content.length }),
    );
    const key = await keyOf(res.body.id);
    expect((await bytesOf(await storage.read(key))).equals(content)).toBe(true);
    expect(readdirSync(storageDir, { recursive: true })).toEqual([]);
    await t.http
      .delete(`/v1/files/${res.body.id}`)
      .set('Cookie', user.cookie)
      .expect(204);
    await expect(storage.read(key)).rejects.toThrow();
  });

  it('refuses an oversized upload with 413 and puts nothing in the bucket', async () => {
    const user = await registerUser(t.http);
    const res = await t.http
      .post('/v1/files')
      .set('Cookie', user.cookie)
      .attach('file', Buffer.alloc(20 * 1024 * 1024 + 1, 0x61), 'big.txt');
    expect(res.status).toBe(413);
    expect(
      await sql(`SELECT 1 FROM "File" WHERE "ownerId" = $1`, [user.id]),
    ).toHaveLength(0);
    expect(bucketEntriesOf(user.id)).toEqual([]);
    expect(readdirSync(storageDir, { recursive: true })).toEqual([]);
  }, 30_000);

  it('streams a file larger than one part as a multipart upload, serves it back from the bucket, and removes a refused one', async () => {
    const user = await registerUser(t.http);
    const content = Buffer.concat([
      Buffer.from('%PDF-1.7\n'),
      Buffer.alloc(12 * 1024 * 1024, 0x20),
    ]);
    const res = await t.http
      .post('/v1/files')
      .set('Cookie', user.cookie)
      .attach('file', content, 'large.pdf')
      .expect(201);
    expect(
      (await bytesOf(await storage.read(await keyOf(res.body.id)))).equals(
        content,
      ),
    ).toBe(true);
    // Served back from the bucket as a stream.
    const download = await t.http
      .get(`/v1/files/${res.body.id}/content`)
      .set('Cookie', user.cookie)
      .buffer(true)
      .parse((response, done) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () => done(null, Buffer.concat(chunks)));
      });
    expect(download.status).toBe(200);
    expect(download.headers['content-type']).toBe('application/pdf');
    expect((download.body as Buffer).equals(content)).toBe(true);
    // Refused only at its end (no word/document.xml), after the whole file went to the bucket.
    const notDocx = Buffer.concat([
      Buffer.from('PK\u0003\u0004', 'latin1'),
      Buffer.alloc(6 * 1024 * 1024, 0x61),
    ]);
    const refused = await t.http
      .post('/v1/files')
      .set('Cookie', user.cookie)
      .attach('file', notDocx, 'fake.docx');
    expect(refused.status).toBe(415);
    expect(bucketEntriesOf(user.id)).toHaveLength(1);
  }, 30_000);

  it('with the bucket unreachable: uploads fail with 503 keeping nothing, deletes fail with 503 keeping the record, and a retry later completes', async () => {
    const user = await registerUser(t.http);
    const kept = await t.http
      .post('/v1/files')
      .set('Cookie', user.cookie)
      .attach('file', Buffer.from('keep me'), 'kept.txt')
      .expect(201);
    const key = await keyOf(kept.body.id);
    await s3.server.close();
    try {
      const upload = await t.http
        .post('/v1/files')
        .set('Cookie', user.cookie)
        .attach('file', Buffer.from('lost'), 'lost.txt');
      expect(upload.status).toBe(503);
      expect(upload.body.code).toBe('storage_unavailable');
      const failed = await t.http
        .delete(`/v1/files/${kept.body.id}`)
        .set('Cookie', user.cookie);
      expect(failed.status).toBe(503);
      const listed = await t.http
        .get('/v1/files')
        .set('Cookie', user.cookie)
        .expect(200);
      expect(listed.body.data.map((file: { id: string }) => file.id)).toEqual([
        kept.body.id,
      ]);
    } finally {
      s3 = await startS3(s3Dir, s3.port);
    }
    expect((await bytesOf(await storage.read(key))).toString()).toBe('keep me');
    await t.http
      .delete(`/v1/files/${kept.body.id}`)
      .set('Cookie', user.cookie)
      .expect(204);
    await t.http
      .delete(`/v1/files/${kept.body.id}`)
      .set('Cookie', user.cookie)
      .expect(404);
    await expect(storage.read(key)).rejects.toThrow();
    expect(readdirSync(storageDir, { recursive: true })).toEqual([]);
  }, 30_000);
});

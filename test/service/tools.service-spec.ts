import { randomUUID } from 'node:crypto';
import { SessionUser } from '../../src/auth/session-user';
import { ToolRegistry } from '../../src/tools/tool-registry';
import { Tool, ToolError } from '../../src/tools/tool';
import { bootServiceModule, ServiceModule } from './service-module';

interface Passages {
  passages: {
    fileId: string;
    fileName: string;
    position: { chunk: number; offset: number };
    text: string;
  }[];
}

/** The built-in tools, called as a run will call them (docs/adr/0061-tools.md). */
describe('built-in tools', () => {
  let services: ServiceModule;
  let search: Tool;
  beforeAll(async () => {
    services = await bootServiceModule('tools_service');
    const tool = await services.moduleRef
      .get(ToolRegistry)
      .find(await services.newUser(), 'files.search');
    if (!tool) throw new Error('files.search is not registered');
    search = tool;
  });
  afterAll(() => services.close());

  /** A file of `owner` whose extracted text is these chunks (as the extraction stores them). */
  async function fileOf(
    owner: SessionUser,
    name: string,
    chunks: string[],
    textStatus: 'ready' | 'pending' = 'ready',
  ): Promise<string> {
    const id = randomUUID();
    await services.db(
      `INSERT INTO "File" (id, "ownerId", "storageKey", "originalName", kind, "mediaType", "sizeBytes", sha256, "textStatus")
       VALUES ($1, $2, $3, $4, 'text', 'text/plain; charset=utf-8', 10, repeat('0', 64), $5::"FileTextStatus")`,
      [id, owner.id, `test/${id}`, name, textStatus],
    );
    for (const [index, text] of chunks.entries())
      await services.db(
        `INSERT INTO "FileChunk" ("fileId", index, text, tsv) VALUES ($1, $2, $3, to_tsvector('simple', $3))`,
        [id, index, text],
      );
    return id;
  }

  const run = async (caller: SessionUser, args: Record<string, unknown>) =>
    JSON.parse(
      await search.execute(caller, args, { executionId: 'e-1' }),
    ) as Passages;

  it('is listed with its schema, for every plan', () => {
    expect(search).toEqual(
      expect.objectContaining({
        id: 'files.search',
        source: 'builtin',
        approval: 'auto',
        inputSchema: expect.objectContaining({ required: ['query'] }),
      }),
    );
  });

  it('finds passages of the caller’s ready files by word prefix, best first, with file, name and position', async () => {
    const owner = await services.newUser();
    const first = 'Packing list for the mountain trip. '.padEnd(2_000, '.');
    const report = await fileOf(owner, 'trip.txt', [
      first,
      'Bring a tent, a stove and warm socks. The tent is the heaviest item; tents matter.',
    ]);
    await fileOf(owner, 'notes.md', [
      'Nothing about camping here, only a tent once.',
    ]);
    const { passages } = await run(owner, { query: 'TENT stov' });
    expect(passages.map((p) => p.fileName)).toEqual(['trip.txt', 'notes.md']);
    expect(passages[0]).toEqual({
      fileId: report,
      fileName: 'trip.txt',
      position: { chunk: 1, offset: first.length },
      text: expect.stringContaining('Bring a tent, a stove'),
    });
  });

  it('never answers another user’s files, files still pending, or files outside fileIds', async () => {
    const owner = await services.newUser();
    const stranger = await services.newUser();
    await fileOf(stranger, 'secret.txt', ['the password is swordfish']);
    await fileOf(owner, 'later.txt', ['swordfish recipes'], 'pending');
    const mine = await fileOf(owner, 'fish.txt', ['swordfish steaks, grilled']);
    const other = await fileOf(owner, 'other.txt', ['more swordfish']);
    expect(
      (await run(owner, { query: 'swordfish' })).passages
        .map((p) => p.fileId)
        .sort(),
    ).toEqual([mine, other].sort());
    expect(
      (
        await run(owner, { query: 'swordfish', fileIds: [mine, 'not-a-uuid'] })
      ).passages.map((p) => p.fileId),
    ).toEqual([mine]);
    expect((await run(stranger, { query: 'steaks' })).passages).toEqual([]);
    expect((await run(owner, { query: '?!' })).passages).toEqual([]);
  });

  it('refuses arguments that do not fit, as an error the model reads', async () => {
    const owner = await services.newUser();
    await expect(
      search.execute(owner, { query: '' }, { executionId: 'e-2' }),
    ).rejects.toBeInstanceOf(ToolError);
    await expect(
      search.execute(
        owner,
        { query: 'x', fileIds: 'all' },
        { executionId: 'e-3' },
      ),
    ).rejects.toThrow(/fileIds must be an array/);
  });
});

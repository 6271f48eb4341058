import { buildPdf } from '../../../test/support/pdf';
import { extractText } from './text-extractor';

const limits = { timeoutMs: 30_000, memoryMb: 128 };

describe('extractText (a child process per file)', () => {
  it('answers the text and page count of a PDF', async () => {
    expect(await extractText('pdf', buildPdf(['one', 'two']), limits)).toEqual({
      ok: true,
      text: 'one\n\ntwo',
      pages: 2,
    });
  });

  it('ends as extraction_timeout at the deadline, the process killed', async () => {
    expect(
      await extractText('pdf', buildPdf(['slow']), { ...limits, timeoutMs: 1 }),
    ).toEqual({ ok: false, code: 'extraction_timeout' });
  });

  it('ends as extraction_stopped when the service stops', async () => {
    const stopping = new AbortController();
    const pending = extractText(
      'pdf',
      buildPdf(['stopped']),
      limits,
      stopping.signal,
    );
    stopping.abort();
    expect(await pending).toEqual({ ok: false, code: 'extraction_stopped' });
  });
});

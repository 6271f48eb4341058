import { Response } from 'express';
import { AppLogger } from '../../common/logging/app-logger';
import { ReaderGone, writeJson } from './json-stream.writer';

/**
 * Sends `document` as a JSON download, streamed (chunked, no Content-Length) while it is read.
 *
 * A failure before the first byte is rethrown with the download headers removed, so the global filter
 * answers problem+json as for any request. After the first byte the status is spent: the connection is
 * destroyed without the final chunk, so the client sees a broken download rather than a truncated document
 * that might still parse, and the failure is logged. A client that leaves only stops the reading.
 */
export async function sendJsonAttachment(
  res: Response,
  fileName: string,
  document: unknown,
  log: AppLogger,
): Promise<void> {
  const headers = {
    'Content-Type': 'application/json; charset=utf-8',
    'Content-Disposition': `attachment; filename="${fileName}"`,
    // Personal data: no shared or browser cache keeps a copy.
    'Cache-Control': 'no-store',
  };
  const previous = Object.keys(headers).map(
    (name) => [name, res.getHeader(name)] as const,
  );
  res.status(200).set(headers);
  try {
    await writeJson(document, res, { signal: abortWhenClientLeaves(res) });
    res.end();
  } catch (error) {
    if (!res.headersSent) {
      // Back to the headers from before (the security middleware's), so the problem answer is not a download.
      for (const [name, value] of previous) {
        if (value === undefined) res.removeHeader(name);
        else res.setHeader(name, value);
      }
      throw error;
    }
    if (error instanceof ReaderGone)
      log.info(
        { fileName },
        'export download ended by the client; reading stopped',
      );
    else
      log.error(
        { err: error, fileName },
        'export failed after its first byte; connection destroyed',
      );
    res.destroy();
  }
}

/** Aborts when the connection closes before the response finished (the client went away). */
function abortWhenClientLeaves(res: Response): AbortSignal {
  const controller = new AbortController();
  res.once('close', () => {
    if (!res.writableFinished) controller.abort();
  });
  return controller.signal;
}

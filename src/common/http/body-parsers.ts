import { IncomingMessage } from 'node:http';
import express, {
  NextFunction,
  Request,
  RequestHandler,
  Response,
} from 'express';

/** A request body that could not be accepted (malformed JSON, too large, wrong type, too deep...). */
export class BodyReadError extends Error {
  constructor(
    readonly type: string,
    readonly status: number,
  ) {
    super(`request body could not be read: ${type}`);
    this.name = 'BodyReadError';
  }
}

/** Deeper JSON is refused before it reaches class-transformer, which recurses per level. */
export const MAX_JSON_DEPTH = 32;
/** Types a body may have: JSON everywhere; multipart only reaches upload routes' own parser. */
const ACCEPTED_BODY_TYPES = [
  'application/json',
  'application/*+json',
  'multipart/form-data',
];

/**
 * The body pipeline of every route: only JSON (and multipart, parsed by the upload routes) is accepted,
 * because form and text bodies are what a cross-site HTML form can send with the user's cookie. The raw
 * bytes stay on `req.rawBody` (webhook signatures are computed over them), and the parsed value is
 * refused when it nests too deep or holds NUL characters or lone surrogates (PostgreSQL text cannot
 * store them, and validators throw on them).
 * docs/adr/0007-request-bodies-and-validation.md
 */
export function bodyParsers(limitBytes: number): RequestHandler[] {
  const verify = (req: IncomingMessage, _res: unknown, buffer: Buffer) => {
    (req as IncomingMessage & { rawBody?: Buffer }).rawBody = buffer;
  };
  const json = wrapErrors(
    express.json({ limit: limitBytes, strict: false, verify }),
  );
  // Most requests have no body (GET, HEAD): nothing to parse or check.
  const parseJson: RequestHandler = (req, res, next) =>
    hasBody(req) ? json(req, res, next) : next();
  return [requireAcceptedType, parseJson, requireSafeJson];
}

function requireAcceptedType(
  req: Request,
  _res: Response,
  next: NextFunction,
): void {
  if (!hasBody(req)) return next();
  if (!req.is(ACCEPTED_BODY_TYPES))
    return next(new BodyReadError('entity.unsupported.type', 415));
  // The JSON parser would decode UTF-16, UTF-32 and even UTF-7, in which `+ADw-` is `<`: text that passed
  // every check as bytes would turn into markup. JSON is UTF-8 (RFC 8259), so nothing else is read.
  const charset = declaredCharset(req.headers['content-type']);
  if (
    charset !== undefined &&
    charset !== 'utf-8' &&
    !req.is('multipart/form-data')
  )
    return next(new BodyReadError('charset.unsupported', 415));
  next();
}

/** The `charset` parameter of a Content-Type, lower-cased and unquoted; undefined when there is none. */
function declaredCharset(contentType: string | undefined): string | undefined {
  const match = contentType?.match(
    /;\s*charset\s*=\s*(?:"([^"]*)"|([^;\s]*))/i,
  );
  return match ? (match[1] ?? match[2]).toLowerCase() : undefined;
}

function requireSafeJson(
  req: Request,
  _res: Response,
  next: NextFunction,
): void {
  if (req.body === undefined) return next();
  const problem = unsafeJsonProblem(req.body);
  next(problem ? new BodyReadError(problem, 400) : undefined);
}

/** A UTF-16 surrogate without its pair: JSON can carry it (\\ud800), no database or encoder can. */
const LONE_SURROGATE =
  /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

function badTextProblem(text: string): string | null {
  if (text.includes('\u0000')) return 'entity.nul.character';
  return LONE_SURROGATE.test(text) ? 'entity.lone.surrogate' : null;
}

/** Walks the parsed JSON without recursion: 'entity.too.deep', a bad-text problem, or null. */
export function unsafeJsonProblem(value: unknown): string | null {
  const pending: { value: unknown; depth: number }[] = [{ value, depth: 0 }];
  while (pending.length > 0) {
    const { value: current, depth } = pending.pop()!;
    if (typeof current === 'string') {
      const problem = badTextProblem(current);
      if (problem) return problem;
      continue;
    }
    if (typeof current === 'number' && !Number.isFinite(current))
      return 'entity.number.out.of.range';
    if (current === null || typeof current !== 'object') continue;
    if (depth >= MAX_JSON_DEPTH) return 'entity.too.deep';
    for (const [key, child] of Object.entries(current)) {
      const problem = badTextProblem(key);
      if (problem) return problem;
      pending.push({ value: child, depth: depth + 1 });
    }
  }
  return null;
}

function hasBody(req: Request): boolean {
  const length = req.headers['content-length'];
  return (
    req.headers['transfer-encoding'] !== undefined ||
    (length !== undefined && length !== '0')
  );
}

function wrapErrors(parser: RequestHandler): RequestHandler {
  return (req: Request, res: Response, next: NextFunction) =>
    parser(req, res, (error?: unknown) => {
      if (!error) return next();
      const { type, status } = error as { type?: unknown; status?: unknown };
      next(
        new BodyReadError(
          typeof type === 'string' ? type : 'unknown',
          typeof status === 'number' ? status : 400,
        ),
      );
    });
}

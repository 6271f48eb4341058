import { IncomingMessage, Server, ServerResponse } from 'node:http';
import Ajv, { ErrorObject, ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';

/**
 * Checks every response a test app sends against the service's own OpenAPI document, as a validating
 * proxy would: the status must be documented for the operation, and a JSON body (or each server-sent
 * event) must match the documented schema. What disagrees is recorded as a violation; the suite's
 * afterEach (openapi-after-each.ts) fails the test during which it happened. Only the document's own
 * operations are checked (not /docs, the web client's files or unknown routes). docs/adr/0003-openapi-response-checks.md
 */

/** The parts of an OpenAPI 3.0 document this reads. */
export interface OpenApiDocument {
  paths: Record<string, Record<string, OpenApiOperation | undefined>>;
  components?: unknown;
}
interface OpenApiOperation {
  responses?: Record<string, OpenApiResponse | undefined>;
}
interface OpenApiResponse {
  content?: Record<string, OpenApiMediaType | undefined>;
}
interface OpenApiMediaType {
  schema?: unknown;
  /** Each event of a text/event-stream body (OpenAPI 3.2's itemSchema, as an extension in 3.0). */
  'x-itemSchema'?: unknown;
}

/** A body past this size is not kept (none of the API's JSON answers comes near it). */
const MAX_CAPTURE_BYTES = 16 * 1024 * 1024;
const DOCUMENT_ID = 'openapi.json';

/** The violations of the running test file, in the order they happened. */
const violations: string[] = [];

/** Hands over (and forgets) what was recorded since the last call. */
export function takeOpenApiViolations(): string[] {
  return violations.splice(0, violations.length);
}

interface Route {
  template: string;
  pattern: RegExp;
  operations: Record<string, OpenApiOperation | undefined>;
}

/** A compiled view of one document: operations by path, and a validator per schema location. */
export class OpenApiResponseChecker {
  private readonly ajv: Ajv;
  private readonly routes: Route[];
  private readonly validators = new Map<string, ValidateFunction>();

  constructor(document: OpenApiDocument) {
    this.ajv = new Ajv({
      strict: false,
      allErrors: true,
      validateFormats: true,
    });
    addFormats(this.ajv);
    for (const format of [
      'int32',
      'int64',
      'float',
      'double',
      'byte',
      'binary',
      'password',
    ])
      this.ajv.addFormat(format, true);
    this.ajv.addSchema(document, DOCUMENT_ID);
    // Literal segments first, so /v1/skills/import wins over /v1/skills/{id}.
    this.routes = Object.entries(document.paths)
      .map(([template, operations]) => ({
        template,
        pattern: new RegExp(
          `^${template.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\{[^/}]+\}/g, '[^/]+')}$`,
        ),
        operations,
      }))
      .sort((a, b) => countParams(a.template) - countParams(b.template));
  }

  /** What is wrong with this response, or [] when the document describes it. */
  check(
    method: string,
    url: string,
    status: number,
    contentType: string | undefined,
    body: Buffer,
  ): string[] {
    const path = decodePath(url.split('?')[0]);
    const route = this.routes.find((candidate) => candidate.pattern.test(path));
    const verb = method.toLowerCase();
    const operation = route?.operations[verb === 'head' ? 'get' : verb];
    if (!route || !operation) return [];
    const where = `${method} ${route.template} answered ${status}`;
    const statusKey = [
      String(status),
      `${String(status)[0]}XX`,
      'default',
    ].find((key) => operation.responses?.[key]);
    if (!statusKey)
      return [
        `${where}: the document lists no ${status} response for this operation`,
      ];
    if (verb === 'head' || body.length === 0) return [];
    const mediaType = (contentType ?? '').split(';')[0].trim().toLowerCase();
    const content = operation.responses?.[statusKey]?.content ?? {};
    // The exact type, else a documented range (`text/*`, `*/*`), as OpenAPI matches media types.
    const documentedAs = [
      mediaType,
      `${mediaType.split('/')[0]}/*`,
      '*/*',
    ].find((key) => content[key]);
    const media = documentedAs ? content[documentedAs] : undefined;
    if (!media) {
      const documented = Object.keys(
        operation.responses?.[statusKey]?.content ?? {},
      );
      return [
        `${where} with ${mediaType || 'no Content-Type'}: documented ${documented.join(', ') || 'no body'}`,
      ];
    }
    const pointer = [
      'paths',
      route.template,
      verb === 'head' ? 'get' : verb,
      'responses',
      statusKey,
      'content',
      documentedAs as string,
    ];
    if (mediaType === 'application/json' || mediaType.endsWith('+json'))
      return this.checkJson(where, pointer, media, body);
    if (mediaType === 'text/event-stream')
      return this.checkEvents(where, pointer, media, body);
    return [];
  }

  private checkJson(
    where: string,
    pointer: string[],
    media: OpenApiMediaType,
    body: Buffer,
  ): string[] {
    if (!media.schema) return [];
    let data: unknown;
    try {
      data = JSON.parse(body.toString('utf8'));
    } catch {
      return [`${where}: the body is not JSON`];
    }
    return this.validate(where, [...pointer, 'schema'], data);
  }

  /** Each `event:` / `data:` block of the stream, as `{ event, data }`, against the documented item schema. */
  private checkEvents(
    where: string,
    pointer: string[],
    media: OpenApiMediaType,
    body: Buffer,
  ): string[] {
    if (!media['x-itemSchema'])
      return [`${where}: the event stream documents no x-itemSchema`];
    const problems: string[] = [];
    for (const block of body.toString('utf8').split(/\n\n/)) {
      const lines = block
        .split('\n')
        .filter((line) => line && !line.startsWith(':'));
      if (lines.length === 0) continue;
      const event =
        lines
          .find((line) => line.startsWith('event:'))
          ?.slice(6)
          .trim() ?? 'message';
      const data = lines
        .filter((line) => line.startsWith('data:'))
        .map((line) => line.slice(5).replace(/^ /, ''))
        .join('\n');
      let parsed: unknown;
      try {
        parsed = JSON.parse(data);
      } catch {
        problems.push(`${where}: event ${event} carries data that is not JSON`);
        continue;
      }
      problems.push(
        ...this.validate(
          `${where}, event ${event}`,
          [...pointer, 'x-itemSchema'],
          { event, data: parsed },
        ),
      );
    }
    return problems;
  }

  private validate(where: string, pointer: string[], data: unknown): string[] {
    const ref = `${DOCUMENT_ID}#/${pointer.map((part) => encodeURIComponent(part.replace(/~/g, '~0').replace(/\//g, '~1'))).join('/')}`;
    let validate = this.validators.get(ref);
    if (!validate) {
      validate = this.ajv.compile({ $ref: ref });
      this.validators.set(ref, validate);
    }
    if (validate(data)) return [];
    return [
      `${where}: the body does not match the documented schema: ${describe(validate.errors ?? [])} in ${JSON.stringify(data).slice(0, 500)}`,
    ];
  }
}

function countParams(template: string): number {
  return (template.match(/\{/g) ?? []).length;
}

function decodePath(path: string): string {
  try {
    return decodeURI(path);
  } catch {
    return path;
  }
}

function describe(errors: ErrorObject[]): string {
  return errors
    .slice(0, 5)
    .map(
      (error) =>
        `${error.instancePath || '(root)'} ${error.message ?? ''}${error.params ? ` ${JSON.stringify(error.params)}` : ''}`,
    )
    .join('; ');
}

/**
 * Records, for every response `server` sends, what disagrees with the document. The listener goes first,
 * so it sees each response before the application writes to it; bodies are copied as they are written.
 */
export function checkResponsesOf(
  server: Server,
  checker: OpenApiResponseChecker,
): void {
  server.prependListener(
    'request',
    (req: IncomingMessage, res: ServerResponse) => {
      const chunks: Buffer[] = [];
      let size = 0;
      const keep = (chunk: unknown, encoding?: unknown) => {
        if (
          chunk === undefined ||
          chunk === null ||
          typeof chunk === 'function' ||
          size > MAX_CAPTURE_BYTES
        )
          return;
        const buffer = Buffer.isBuffer(chunk)
          ? chunk
          : chunk instanceof Uint8Array
            ? Buffer.from(chunk)
            : typeof chunk === 'string'
              ? Buffer.from(
                  chunk,
                  typeof encoding === 'string'
                    ? (encoding as BufferEncoding)
                    : 'utf8',
                )
              : undefined;
        if (!buffer) return;
        size += buffer.length;
        chunks.push(buffer);
      };
      const write = res.write.bind(res) as (...args: unknown[]) => boolean;
      const end = res.end.bind(res) as (...args: unknown[]) => ServerResponse;
      res.write = ((...args: unknown[]) => {
        keep(args[0], args[1]);
        return write(...args);
      }) as ServerResponse['write'];
      res.end = ((...args: unknown[]) => {
        keep(args[0], args[1]);
        return end(...args);
      }) as ServerResponse['end'];
      res.once('finish', () => {
        if (size > MAX_CAPTURE_BYTES) return;
        const contentType = res.getHeader('content-type');
        violations.push(
          ...checker.check(
            req.method ?? 'GET',
            req.url ?? '/',
            res.statusCode,
            typeof contentType === 'string' ? contentType : undefined,
            Buffer.concat(chunks),
          ),
        );
      });
    },
  );
}

// docs/adr/0015-openapi-document.md
import { INestApplication } from '@nestjs/common';
import { DocumentBuilder, OpenAPIObject, SwaggerModule } from '@nestjs/swagger';
import { problemResponse } from './api-problems.decorator';
import { FieldErrorDto, ProblemDetailsDto } from './problem-details.dto';

export const SESSION_COOKIE_SCHEME = 'session';

/** Builds the OpenAPI 3 document from the controllers and DTOs (Swagger CLI plugin + decorators). */
export function buildOpenApiDocument(
  app: INestApplication,
  options: { cookieName: string; serverUrl?: string },
): OpenAPIObject {
  const config = new DocumentBuilder()
    .setTitle('Chat API')
    .setDescription(
      'Account-scoped AI chat, skills and billing API. Every error is application/problem+json (RFC 9457) ' +
        'with a stable `code` and the `requestId` also sent as `x-request-id`. /v1/webhooks/* and /v1/admin/* ' +
        'are internal.',
    )
    .setVersion('1.0.0')
    .setLicense('Proprietary', 'https://example.com/terms')
    .addServer(options.serverUrl ?? '/', 'This server')
    .addCookieAuth(
      options.cookieName,
      {
        type: 'apiKey',
        in: 'cookie',
        name: options.cookieName,
        description: 'Opaque session token set by POST /v1/auth/login.',
      },
      SESSION_COOKIE_SCHEME,
    )
    // Session-only unless an operation says otherwise (@Public() gives it an empty requirement).
    .addSecurityRequirements(SESSION_COOKIE_SCHEME)
    .build();
  const document = SwaggerModule.createDocument(app, config, {
    extraModels: [ProblemDetailsDto, FieldErrorDto],
    operationIdFactory: (controllerKey: string, methodKey: string) =>
      `${controllerKey.replace(/Controller$/, '')}_${methodKey}`,
  });
  return withNullableAsDefined(withCommonProblems(document));
}

/**
 * `nullable` as OpenAPI 3.0.3 defines it, so that strict validators read the schemas as meant:
 * - it only widens a `type` beside it, and validators refuse it alone. The Swagger CLI plugin adds it to
 *   every `T | null` property, also to those whose schema is a choice that admits null itself
 *   (ApiNullableObjectProperty): there it is removed;
 * - beside an `enum`, null is allowed only when the enum lists it: it is added to nullable enums.
 * Works on a copy: the decorators' metadata (and constants such as enum arrays) stay as they are.
 */
function withNullableAsDefined(document: OpenAPIObject): OpenAPIObject {
  const copy = JSON.parse(JSON.stringify(document)) as OpenAPIObject;
  const visit = (node: unknown): void => {
    if (Array.isArray(node)) return node.forEach(visit);
    if (typeof node !== 'object' || node === null) return;
    const schema = node as Record<string, unknown>;
    if ('nullable' in schema && !('type' in schema)) delete schema.nullable;
    if (
      schema.nullable === true &&
      Array.isArray(schema.enum) &&
      !schema.enum.includes(null)
    )
      schema.enum = [...(schema.enum as unknown[]), null];
    Object.values(schema).forEach(visit);
  };
  visit(copy.components?.schemas);
  visit(copy.paths);
  return copy;
}

/**
 * Statuses any operation can answer, whatever its handler does: a malformed or invalid request (400),
 * a body over the limit (413) or not JSON (415), an unexpected failure (500), and a dependency that is
 * down, such as the database (503).
 */
const COMMON_PROBLEM_STATUSES = [400, 413, 415, 500, 503];

/** Unsafe methods from a browser origin that is not allowed are refused before any handler (CSRF). */
const UNSAFE_METHODS = new Set(['put', 'post', 'delete', 'patch']);

const NOT_MODIFIED = {
  description:
    'Not modified: the `If-None-Match` request header holds the current `ETag` of the JSON body (no body).',
};

function withCommonProblems(document: OpenAPIObject): OpenAPIObject {
  for (const pathItem of Object.values(document.paths)) {
    for (const method of [
      'get',
      'put',
      'post',
      'delete',
      'patch',
      'head',
      'options',
    ] as const) {
      const operation = pathItem[method];
      if (!operation) continue;
      const responses = operation.responses;
      for (const status of COMMON_PROBLEM_STATUSES)
        responses[String(status)] ??= problemResponse(status);
      if (UNSAFE_METHODS.has(method)) responses['403'] ??= problemResponse(403);
      if (method === 'get' && answersJson(responses['200']))
        responses['304'] ??= NOT_MODIFIED;
    }
  }
  return document;
}

/** Whether a documented response has a JSON body (Express gives those an ETag). */
function answersJson(response: unknown): boolean {
  const content = (
    response as { content?: Record<string, unknown> } | undefined
  )?.content;
  return content !== undefined && 'application/json' in content;
}

/** Serves Swagger UI at /docs and the document at /docs-json. */
export function setupOpenApi(
  app: INestApplication,
  document: OpenAPIObject,
): void {
  SwaggerModule.setup('docs', app, document, {
    jsonDocumentUrl: 'docs-json',
    customSiteTitle: 'Chat API docs',
  });
}

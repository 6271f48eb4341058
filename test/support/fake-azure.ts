import { IncomingMessage, ServerResponse } from 'node:http';
import { LoopbackServer, readBody } from './loopback-server';

export const AZURE_KEY = 'azure-key-0123456789abcdef';
export const TENANT = 'tenant-0000-1111';
export const ENTRA_CLIENT_ID = 'entra-client-id';
export const ENTRA_CLIENT_SECRET = 'entra-secret-0123456789abcdef';
export const ENTRA_SCOPE = 'https://cognitiveservices.azure.com/.default';

export type FakeAzureMode =
  /** Words, then a stop and the usage (`cachedTokens` of the prompt's 7 read from the cache). */
  | { kind: 'ok'; words: string[]; cachedTokens?: number }
  /** Azure's throttling: 429 with its Retry-After in seconds and in milliseconds. */
  | { kind: 'rate-limited'; retryAfter: string; retryAfterMs: string }
  /** Words, then the content filter stops the answer (`finish_reason: content_filter`). */
  | { kind: 'filtered'; words: string[] };

/** One chat completions call as the fake received it. */
export interface AzureCall {
  deployment: string;
  apiVersion: string | null;
  apiKey: string | undefined;
  authorization: string | undefined;
  body: Record<string, unknown>;
}

const PROMPT_TOKENS = 7;

/**
 * Azure OpenAI and the Microsoft Entra token endpoint on loopback, in their wire formats:
 * `POST /openai/deployments/<d>/chat/completions?api-version=...` (400 without api-version, 401 without
 * the key or a bearer token it issued and that has not expired, 404 for an unknown deployment) streaming
 * OpenAI-format chunks with Azure's filter annotations; `POST /<tenant>/oauth2/v2.0/token` (the
 * client-credentials grant, checking client id, secret and scope; `tokenLifetimeS` sets `expires_in`).
 */
export class FakeAzure extends LoopbackServer {
  mode: FakeAzureMode = { kind: 'ok', words: ['Hello', ' there'] };
  readonly deployments = new Set(['gpt-4o-mini']);
  readonly calls: AzureCall[] = [];
  tokenRequests = 0;
  tokenLifetimeS = 3600;
  /** The tokens issued, with the epoch ms they expire at; `revokeTokens` forgets them. */
  private readonly tokens = new Map<string, number>();

  get tokenUrl(): string {
    return `${this.baseUrl}/${TENANT}/oauth2/v2.0/token`;
  }

  get resourceUrl(): string {
    return `${this.baseUrl}/openai`;
  }

  revokeTokens(): void {
    this.tokens.clear();
  }

  protected async handle(
    req: IncomingMessage,
    res: ServerResponse,
  ): Promise<void> {
    const url = new URL(req.url ?? '/', this.baseUrl);
    const body = await readBody(req);
    if (
      req.method === 'POST' &&
      url.pathname === `/${TENANT}/oauth2/v2.0/token`
    )
      return this.token(new URLSearchParams(body), res);
    const match = /^\/openai\/deployments\/([^/]+)\/chat\/completions$/.exec(
      url.pathname,
    );
    if (req.method !== 'POST' || !match)
      return json(res, 404, azureError('404', 'Resource not found'));
    const call: AzureCall = {
      deployment: decodeURIComponent(match[1]),
      apiVersion: url.searchParams.get('api-version'),
      apiKey: header(req, 'api-key'),
      authorization: header(req, 'authorization'),
      body: JSON.parse(body || '{}') as Record<string, unknown>,
    };
    this.calls.push(call);
    return this.completions(call, res);
  }

  private completions(call: AzureCall, res: ServerResponse): void {
    if (!call.apiVersion)
      return json(
        res,
        400,
        azureError(
          'MissingApiVersionParameter',
          'The api-version query parameter (?api-version=) is required for all requests.',
        ),
      );
    if (!this.authorized(call))
      return json(
        res,
        401,
        azureError(
          '401',
          'Access denied due to invalid subscription key or wrong API endpoint. Make sure to provide a valid key for an active subscription and use a correct regional API endpoint for your resource.',
        ),
      );
    if (!this.deployments.has(call.deployment))
      return json(
        res,
        404,
        azureError(
          'DeploymentNotFound',
          'The API deployment for this resource does not exist.',
        ),
      );
    const mode = this.mode;
    if (mode.kind === 'rate-limited') {
      res.setHeader('retry-after', mode.retryAfter);
      res.setHeader('retry-after-ms', mode.retryAfterMs);
      return json(
        res,
        429,
        azureError(
          '429',
          `Requests to the ChatCompletions_Create Operation under Azure OpenAI API version ${call.apiVersion} have exceeded token rate limit of your current OpenAI S0 pricing tier. Please retry after ${mode.retryAfter} seconds.`,
        ),
      );
    }
    stream(res, mode);
  }

  /** The key, or a bearer token this fake issued that has not expired. */
  private authorized(call: AzureCall): boolean {
    if (call.apiKey !== undefined) return call.apiKey === AZURE_KEY;
    const token = /^Bearer (.+)$/.exec(call.authorization ?? '')?.[1];
    const expiresAt = token === undefined ? undefined : this.tokens.get(token);
    return expiresAt !== undefined && Date.now() < expiresAt;
  }

  private token(form: URLSearchParams, res: ServerResponse): void {
    this.tokenRequests += 1;
    if (form.get('grant_type') !== 'client_credentials')
      return json(res, 400, {
        error: 'unsupported_grant_type',
        error_description:
          'AADSTS70003: The app requested an unsupported grant type.',
      });
    if (
      form.get('client_id') !== ENTRA_CLIENT_ID ||
      form.get('client_secret') !== ENTRA_CLIENT_SECRET
    )
      return json(res, 401, {
        error: 'invalid_client',
        error_description: `AADSTS7000215: Invalid client secret provided. Ensure the secret being sent in the request is the client secret value, not the client secret ID, for a secret added to app '${form.get('client_id') ?? ''}'.\r\nTrace ID: 0f1e2d3c\r\nCorrelation ID: 4b5a6978`,
        error_codes: [7000215],
      });
    if (form.get('scope') !== ENTRA_SCOPE)
      return json(res, 400, {
        error: 'invalid_scope',
        error_description: `AADSTS1002012: The provided value for scope ${form.get('scope') ?? ''} is not valid.`,
      });
    const token = `entra-token-${this.tokenRequests}`;
    this.tokens.set(token, Date.now() + this.tokenLifetimeS * 1000);
    json(res, 200, {
      token_type: 'Bearer',
      expires_in: this.tokenLifetimeS,
      ext_expires_in: this.tokenLifetimeS,
      access_token: token,
    });
  }
}

/** Azure's stream: the prompt's filter annotation first (no choices), filtered deltas, the end, the usage. */
function stream(
  res: ServerResponse,
  mode: Extract<FakeAzureMode, { kind: 'ok' | 'filtered' }>,
): void {
  res.writeHead(200, {
    'Content-Type': 'text/event-stream',
    'Cache-Control': 'no-cache',
  });
  const send = (data: unknown) =>
    res.write(
      `data: ${typeof data === 'string' ? data : JSON.stringify(data)}\n\n`,
    );
  send({
    choices: [],
    created: 0,
    id: '',
    model: '',
    object: '',
    prompt_filter_results: [
      { prompt_index: 0, content_filter_results: passed() },
    ],
  });
  for (const word of mode.words)
    send(chunk({ delta: { content: word }, finish_reason: null }));
  if (mode.kind === 'filtered') {
    send(
      chunk({
        delta: {},
        finish_reason: 'content_filter',
        content_filter_results: {
          ...passed(),
          violence: { filtered: true, severity: 'medium' },
        },
      }),
    );
    send('[DONE]');
    res.end();
    return;
  }
  send(chunk({ delta: {}, finish_reason: 'stop' }));
  send({
    id: 'chatcmpl-1',
    object: 'chat.completion.chunk',
    created: 0,
    model: 'gpt-4o-mini-2024-07-18',
    choices: [],
    usage: {
      prompt_tokens: PROMPT_TOKENS,
      completion_tokens: mode.words.length,
      total_tokens: PROMPT_TOKENS + mode.words.length,
      prompt_tokens_details: {
        audio_tokens: 0,
        cached_tokens: mode.cachedTokens ?? 0,
      },
      completion_tokens_details: { reasoning_tokens: 0 },
    },
  });
  send('[DONE]');
  res.end();
}

function chunk(choice: Record<string, unknown>): Record<string, unknown> {
  return {
    id: 'chatcmpl-1',
    object: 'chat.completion.chunk',
    created: 0,
    model: 'gpt-4o-mini-2024-07-18',
    choices: [{ index: 0, content_filter_results: passed(), ...choice }],
  };
}

function passed(): Record<string, unknown> {
  return Object.fromEntries(
    ['hate', 'self_harm', 'sexual', 'violence'].map((category) => [
      category,
      { filtered: false, severity: 'safe' },
    ]),
  );
}

function azureError(code: string, message: string): Record<string, unknown> {
  return { error: { code, message } };
}

function header(req: IncomingMessage, name: string): string | undefined {
  const value = req.headers[name];
  return Array.isArray(value) ? value[0] : value;
}

function json(res: ServerResponse, status: number, body: unknown): void {
  res
    .writeHead(status, { 'Content-Type': 'application/json' })
    .end(JSON.stringify(body));
}

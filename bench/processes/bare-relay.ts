/**
 * The bare reference, its own process: what the service's work costs without the service.
 *
 * 1. `node:http` on RELAY port: `POST /v1/chat` reads the JSON body ({model, messages, idempotencyKey, ...}),
 *    maps the public model id to its upstream name from the same catalog file the service syncs, calls the
 *    mock provider with undici (`request()` through a keep-alive Agent), parses its SSE with
 *    eventsource-parser and writes every delta as `text/plain; charset=utf-8` chunks, then ends. No
 *    session, no database, no idempotency, no quota, no admission control.
 * 2. Express 5 on the EXPRESS port: `GET /v1/plans` and `GET /v1/auth/me` answer with `res.json()` the exact
 *    JSON the service answered for them (the orchestrator fetched it once and hands the bytes over in
 *    FIXTURES_FILE); `/v1/auth/me` wants a `sid` cookie, as the service does.
 *
 * Env: MOCK_URL (http://127.0.0.1:PORT/v1), CATALOG_FILE, FIXTURES_FILE, RELAY_PORT / EXPRESS_PORT (0 = any).
 */
import { readFileSync } from 'node:fs';
import {
  createServer,
  IncomingMessage,
  Server,
  ServerResponse,
} from 'node:http';
import { AddressInfo } from 'node:net';
import { createParser, EventSourceMessage } from 'eventsource-parser';
import express, { Request, Response } from 'express';
import { Agent, request } from 'undici';
import { isObject, ReadyMessage } from '../support/protocol';

const mockUrl = requiredEnv('MOCK_URL').replace(/\/+$/, '');
const dispatcher = new Agent({
  keepAliveTimeout: 60_000,
  connections: null,
  pipelining: 1,
  headersTimeout: 60_000,
  bodyTimeout: 60_000,
});

interface RelayModel {
  upstreamModel: string;
  maxOutputTokens: number;
}

/** Public id -> upstream name, exactly as the service's catalog maps it (openai models only). */
function loadModels(file: string): Map<string, RelayModel> {
  const catalog: unknown = JSON.parse(readFileSync(file, 'utf8'));
  const models = new Map<string, RelayModel>();
  if (!isObject(catalog) || !Array.isArray(catalog.models))
    throw new Error(`${file} is not a catalog`);
  for (const model of catalog.models) {
    if (
      isObject(model) &&
      model.provider === 'openai' &&
      typeof model.id === 'string' &&
      typeof model.upstreamModel === 'string'
    ) {
      models.set(model.id, {
        upstreamModel: model.upstreamModel,
        maxOutputTokens:
          typeof model.maxOutputTokens === 'number'
            ? model.maxOutputTokens
            : 4096,
      });
    }
  }
  return models;
}

const models = loadModels(requiredEnv('CATALOG_FILE'));

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const parts: Buffer[] = [];
    req.on('data', (part: Buffer) => parts.push(part));
    req.on('end', () => resolve(Buffer.concat(parts).toString('utf8')));
    req.on('error', reject);
  });
}

function problem(res: ServerResponse, status: number, detail: string): void {
  const text = JSON.stringify({
    type: 'about:blank',
    title: detail,
    status,
    detail,
  });
  res.writeHead(status, {
    'Content-Type': 'application/problem+json',
    'Content-Length': Buffer.byteLength(text),
  });
  res.end(text);
}

async function relayChat(
  req: IncomingMessage,
  res: ServerResponse,
): Promise<void> {
  let body: unknown;
  try {
    body = JSON.parse(await readBody(req));
  } catch {
    problem(res, 400, 'body is not JSON');
    return;
  }
  const model =
    isObject(body) && typeof body.model === 'string'
      ? models.get(body.model)
      : undefined;
  if (!isObject(body) || !model || !Array.isArray(body.messages)) {
    problem(res, 404, 'unknown model or no messages');
    return;
  }
  const abort = new AbortController();
  res.on('close', () => {
    if (!res.writableFinished) abort.abort();
  });
  const upstream = await request(`${mockUrl}/chat/completions`, {
    method: 'POST',
    dispatcher,
    signal: abort.signal,
    headers: {
      'content-type': 'application/json',
      authorization: 'Bearer bench',
    },
    body: JSON.stringify({
      model: model.upstreamModel,
      messages: body.messages,
      max_tokens: model.maxOutputTokens,
      stream: true,
      stream_options: { include_usage: true },
    }),
  });
  if (upstream.statusCode !== 200) {
    await upstream.body.dump();
    problem(res, 502, `provider answered ${upstream.statusCode}`);
    return;
  }
  res.writeHead(200, {
    'Content-Type': 'text/plain; charset=utf-8',
    'Cache-Control': 'no-cache, no-transform',
  });
  const parser = createParser({
    onEvent(event: EventSourceMessage) {
      if (event.data === '[DONE]') return;
      const chunk: unknown = JSON.parse(event.data);
      if (!isObject(chunk) || !Array.isArray(chunk.choices)) return;
      const choice: unknown = chunk.choices[0];
      const delta =
        isObject(choice) && isObject(choice.delta) ? choice.delta : undefined;
      if (
        delta &&
        typeof delta.content === 'string' &&
        delta.content.length > 0
      )
        res.write(delta.content);
    },
  });
  const decoder = new TextDecoder();
  for await (const bytes of upstream.body)
    parser.feed(decoder.decode(bytes as Buffer, { stream: true }));
  res.end();
}

let errorsLogged = 0;
const relay = createServer((req, res) => {
  if (req.method === 'POST' && req.url === '/v1/chat') {
    relayChat(req, res).catch((error: unknown) => {
      if (errorsLogged++ < 20)
        process.stderr.write(
          `bare relay: ${error instanceof Error ? error.message : String(error)}\n`,
        );
      if (!res.headersSent) problem(res, 502, 'provider failed');
      else res.destroy();
    });
    return;
  }
  problem(res, 404, 'not found');
});

interface Fixtures {
  plans: string;
  me: string;
}

function loadFixtures(file: string): Fixtures {
  const parsed: unknown = JSON.parse(readFileSync(file, 'utf8'));
  if (
    !isObject(parsed) ||
    typeof parsed.plans !== 'string' ||
    typeof parsed.me !== 'string'
  )
    throw new Error(`${file}: expected {plans, me} strings`);
  return { plans: parsed.plans, me: parsed.me };
}

/**
 * `res.json(value)` of the parsed bytes: the same serialization work the service does per request. The
 * round trip must give the same bytes back, or the reference would not answer what the service answers.
 */
function jsonValue(text: string, name: string): unknown {
  const value: unknown = JSON.parse(text);
  if (JSON.stringify(value) !== text)
    throw new Error(
      `${name}: JSON.stringify(JSON.parse(bytes)) differs from the service's bytes`,
    );
  return value;
}

const fixtures = loadFixtures(requiredEnv('FIXTURES_FILE'));
const plans = jsonValue(fixtures.plans, 'plans');
const me = jsonValue(fixtures.me, 'me');
const app = express();
app.get('/v1/plans', (_req: Request, res: Response) => {
  res.json(plans);
});
app.get('/v1/auth/me', (req: Request, res: Response) => {
  if (
    !/(?:^|;\s*)sid=[A-Za-z0-9_-]{43}(?:;|$)/.test(req.headers.cookie ?? '')
  ) {
    res.status(401).type('application/problem+json').send('{"status":401}');
    return;
  }
  res.json(me);
});
const expressServer = createServer(app);

function listen(server: Server, port: number): Promise<number> {
  return new Promise((resolve) =>
    server.listen(port, '127.0.0.1', () =>
      resolve((server.address() as AddressInfo).port),
    ),
  );
}

function requiredEnv(name: string): string {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is required`);
  return value;
}

void Promise.all([
  listen(relay, Number(process.env.RELAY_PORT ?? 0)),
  listen(expressServer, Number(process.env.EXPRESS_PORT ?? 0)),
]).then(([relayPort, expressPort]) => {
  const ready: ReadyMessage = {
    type: 'ready',
    ports: { relay: relayPort, express: expressPort },
  };
  if (process.send) process.send(ready);
  else process.stdout.write(`${JSON.stringify(ready)}\n`);
});

process.on('disconnect', () => process.exit(0));
// An orderly exit, so `--cpu-prof` (bench --profile) writes its profile.
process.on('SIGTERM', () => process.exit(0));

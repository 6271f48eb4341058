// docs/adr/0055-traces.md
import type { NodeSDK, tracing } from '@opentelemetry/sdk-node';

/** What main keeps of a started SDK: exported spans are flushed on shutdown. */
export interface Tracing {
  endpoint: string;
  shutdown(): Promise<void>;
}

export interface TracingSettings {
  /** OTEL_EXPORTER_OTLP_ENDPOINT, validated by the config; OTEL_EXPORTER_OTLP_TRACES_ENDPOINT also turns tracing on. */
  otlpEndpoint?: string;
  serviceName: string;
}

/** Probes and scrapes: one span each every few seconds would bury the traces of real requests. */
const UNTRACED_PATHS = /^\/(v1\/health\/|metrics(\?|$))/;
/** Attributes that can carry a URL's query string (OAuth codes and states among them). */
const URL_ATTRIBUTES = ['url.full', 'url.query', 'http.url', 'http.target'];
const REDACTED = 'REDACTED';

/**
 * Starts OpenTelemetry's Node SDK when an OTLP endpoint is configured, before the modules it instruments
 * are loaded (main requires the server only after this): inbound HTTP, Express and Nest routes, PostgreSQL
 * (pg, under Prisma), Redis (ioredis) and outbound calls through undici (the model providers). Unset, it
 * answers null and not one module of the SDK is read. The exporters follow the standard OTEL_* variables
 * (endpoint, protocol, headers, timeout, OTEL_BSP_* batching, sampler); `env` is the process environment
 * with `.env` under it.
 */
export function startTracing(
  settings: TracingSettings,
  env: NodeJS.ProcessEnv,
  target: NodeJS.ProcessEnv = process.env,
): Tracing | null {
  const endpoint =
    settings.otlpEndpoint ?? env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?.trim();
  if (!endpoint || env.OTEL_SDK_DISABLED?.trim() === 'true') return null;
  // The SDK and its exporters read process.env only: variables from .env join it (the real environment wins).
  for (const [name, value] of Object.entries(env))
    if (name.startsWith('OTEL_') && target[name] === undefined)
      target[name] = value;
  // Traces only unless asked: metrics have the Prometheus listener, logs go to stdout.
  target.OTEL_METRICS_EXPORTER ??= 'none';
  target.OTEL_LOGS_EXPORTER ??= 'none';
  const sdk = createSdk(settings.serviceName, target);
  sdk.start();
  return { endpoint: new URL(endpoint).origin, shutdown: () => sdk.shutdown() };
}

/* eslint-disable @typescript-eslint/no-require-imports -- loaded on demand: with tracing off none of it is read */
function createSdk(serviceName: string, env: NodeJS.ProcessEnv): NodeSDK {
  const { NodeSDK, tracing: trace } =
    require('@opentelemetry/sdk-node') as typeof import('@opentelemetry/sdk-node');
  const { HttpInstrumentation } =
    require('@opentelemetry/instrumentation-http') as typeof import('@opentelemetry/instrumentation-http');
  const { ExpressInstrumentation } =
    require('@opentelemetry/instrumentation-express') as typeof import('@opentelemetry/instrumentation-express');
  const { NestInstrumentation } =
    require('@opentelemetry/instrumentation-nestjs-core') as typeof import('@opentelemetry/instrumentation-nestjs-core');
  const { PgInstrumentation } =
    require('@opentelemetry/instrumentation-pg') as typeof import('@opentelemetry/instrumentation-pg');
  const { IORedisInstrumentation } =
    require('@opentelemetry/instrumentation-ioredis') as typeof import('@opentelemetry/instrumentation-ioredis');
  const { UndiciInstrumentation } =
    require('@opentelemetry/instrumentation-undici') as typeof import('@opentelemetry/instrumentation-undici');
  return new NodeSDK({
    serviceName,
    // The query-string scrubber first, so the exporters never see what it removes.
    spanProcessors: [
      new RedactUrlQueries(),
      ...exportingProcessors(trace, env),
    ],
    instrumentations: [
      new HttpInstrumentation({
        ignoreIncomingRequestHook: (request) =>
          UNTRACED_PATHS.test(request.url ?? ''),
      }),
      new ExpressInstrumentation(),
      new NestInstrumentation(),
      // Statement text with its placeholders, never the values bound to them.
      new PgInstrumentation({ enhancedDatabaseReporting: false }),
      new IORedisInstrumentation(),
      new UndiciInstrumentation(),
    ],
  });
}

/**
 * OTEL_TRACES_EXPORTER (otlp, the default, or console; none exports nothing) with the OTLP protocol of
 * OTEL_EXPORTER_OTLP_TRACES_PROTOCOL / OTEL_EXPORTER_OTLP_PROTOCOL (http/protobuf, the default; http/json;
 * grpc), batched by OTEL_BSP_*: what the SDK would build from the environment, next to our own processor.
 */
function exportingProcessors(
  trace: typeof tracing,
  env: NodeJS.ProcessEnv,
): tracing.SpanProcessor[] {
  const exporters = (env.OTEL_TRACES_EXPORTER ?? 'otlp')
    .split(',')
    .map((name) => name.trim());
  if (exporters.includes('none')) return [];
  const processors: tracing.SpanProcessor[] = [];
  if (exporters.includes('console'))
    processors.push(
      new trace.SimpleSpanProcessor(new trace.ConsoleSpanExporter()),
    );
  if (exporters.includes('otlp') || processors.length === 0)
    processors.push(
      new trace.BatchSpanProcessor(otlpExporter(env), batchSettings(env)),
    );
  return processors;
}

function otlpExporter(env: NodeJS.ProcessEnv): tracing.SpanExporter {
  const protocol = (
    env.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL ??
    env.OTEL_EXPORTER_OTLP_PROTOCOL ??
    'http/protobuf'
  ).trim();
  if (protocol === 'grpc')
    return new (
      require('@opentelemetry/exporter-trace-otlp-grpc') as typeof import('@opentelemetry/exporter-trace-otlp-grpc')
    ).OTLPTraceExporter();
  if (protocol === 'http/json')
    return new (
      require('@opentelemetry/exporter-trace-otlp-http') as typeof import('@opentelemetry/exporter-trace-otlp-http')
    ).OTLPTraceExporter();
  return new (
    require('@opentelemetry/exporter-trace-otlp-proto') as typeof import('@opentelemetry/exporter-trace-otlp-proto')
  ).OTLPTraceExporter();
}
/* eslint-enable @typescript-eslint/no-require-imports */

function batchSettings(env: NodeJS.ProcessEnv) {
  const number = (name: string) => {
    const value = Number(env[name]);
    return env[name] !== undefined && Number.isFinite(value) && value >= 0
      ? value
      : undefined;
  };
  return {
    maxQueueSize: number('OTEL_BSP_MAX_QUEUE_SIZE'),
    scheduledDelayMillis: number('OTEL_BSP_SCHEDULE_DELAY'),
    exportTimeoutMillis: number('OTEL_BSP_EXPORT_TIMEOUT'),
    maxExportBatchSize: number('OTEL_BSP_MAX_EXPORT_BATCH_SIZE'),
  };
}

/**
 * Removes query strings from URL attributes as spans start (Nest's instrumentation records the original
 * URL, query included, and offers no hook): a callback's OAuth code or state must not reach a collector.
 */
class RedactUrlQueries implements tracing.SpanProcessor {
  onStart(span: tracing.Span): void {
    for (const name of URL_ATTRIBUTES) {
      const value = span.attributes[name];
      if (typeof value !== 'string' || value === '') continue;
      if (name === 'url.query') span.setAttribute(name, REDACTED);
      else if (value.includes('?'))
        span.setAttribute(
          name,
          `${value.slice(0, value.indexOf('?'))}?${REDACTED}`,
        );
    }
  }
  onEnd(): void {}
  forceFlush(): Promise<void> {
    return Promise.resolve();
  }
  shutdown(): Promise<void> {
    return Promise.resolve();
  }
}

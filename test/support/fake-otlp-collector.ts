import {
  createServer,
  IncomingMessage,
  Server,
  ServerResponse,
} from 'node:http';
import { AddressInfo } from 'node:net';

/** One span as OTLP/JSON carries it, attributes flattened to their values. */
export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  parentSpanId: string;
  name: string;
  kind: number;
  scope: string;
  service: string;
  attributes: Record<string, string | number | boolean>;
  events: string[];
  status: { code?: number; message?: string };
}

interface OtlpValue {
  stringValue?: string;
  intValue?: string | number;
  doubleValue?: number;
  boolValue?: boolean;
}
interface OtlpAttribute {
  key: string;
  value: OtlpValue;
}
interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  attributes?: OtlpAttribute[];
  events?: { name: string }[];
  status?: { code?: number; message?: string };
}
interface OtlpTraces {
  resourceSpans?: {
    resource?: { attributes?: OtlpAttribute[] };
    scopeSpans?: { scope?: { name?: string }; spans?: OtlpSpan[] }[];
  }[];
}

/**
 * An OpenTelemetry collector's OTLP/HTTP receiver on loopback, for the JSON encoding
 * (OTEL_EXPORTER_OTLP_PROTOCOL=http/json): POST /v1/traces with an ExportTraceServiceRequest, answered 200
 * with an empty ExportTraceServiceResponse. Every request's path is kept, so a test sees what else was sent.
 */
export class FakeOtlpCollector {
  readonly spans: ReceivedSpan[] = [];
  readonly paths: string[] = [];
  readonly contentTypes: string[] = [];
  private server?: Server;

  async start(): Promise<this> {
    this.server = createServer((req, res) => void this.handle(req, res));
    await new Promise<void>((done) =>
      this.server!.listen(0, '127.0.0.1', done),
    );
    return this;
  }

  get endpoint(): string {
    return `http://127.0.0.1:${(this.server!.address() as AddressInfo).port}`;
  }

  close(): Promise<void> {
    return new Promise((done) =>
      this.server ? this.server.close(() => done()) : done(),
    );
  }

  private async handle(
    req: IncomingMessage,
    res: ServerResponse,
  ): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    this.paths.push(`${req.method} ${req.url}`);
    this.contentTypes.push(String(req.headers['content-type']));
    if (
      req.method === 'POST' &&
      req.url === '/v1/traces' &&
      String(req.headers['content-type']).startsWith('application/json')
    ) {
      this.receive(
        JSON.parse(Buffer.concat(chunks).toString('utf8')) as OtlpTraces,
      );
    }
    res.writeHead(200, { 'Content-Type': 'application/json' }).end('{}');
  }

  private receive(request: OtlpTraces): void {
    for (const resourceSpans of request.resourceSpans ?? []) {
      const service = String(
        flatten(resourceSpans.resource?.attributes)['service.name'] ?? '',
      );
      for (const scopeSpans of resourceSpans.scopeSpans ?? []) {
        for (const span of scopeSpans.spans ?? []) {
          this.spans.push({
            traceId: span.traceId,
            spanId: span.spanId,
            parentSpanId: span.parentSpanId ?? '',
            name: span.name,
            kind: span.kind,
            scope: scopeSpans.scope?.name ?? '',
            service,
            attributes: flatten(span.attributes),
            events: (span.events ?? []).map((event) => event.name),
            status: span.status ?? {},
          });
        }
      }
    }
  }
}

function flatten(
  attributes: OtlpAttribute[] = [],
): Record<string, string | number | boolean> {
  const flat: Record<string, string | number | boolean> = {};
  for (const { key, value } of attributes) {
    if (value.stringValue !== undefined) flat[key] = value.stringValue;
    else if (value.intValue !== undefined) flat[key] = Number(value.intValue);
    else if (value.doubleValue !== undefined) flat[key] = value.doubleValue;
    else if (value.boolValue !== undefined) flat[key] = value.boolValue;
  }
  return flat;
}

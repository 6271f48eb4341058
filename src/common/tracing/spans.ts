import { Attributes, Span, SpanStatusCode, trace } from '@opentelemetry/api';

/**
 * The service's own spans, through OpenTelemetry's API only: with no SDK started (no OTLP endpoint) the
 * tracer is the API's no-op one and a span costs next to nothing.
 */
const tracer = trace.getTracer('chat-api');

/** Runs `work` in a child span of the active one, ended when it settles; a throw marks it failed. */
export async function inSpan<T>(
  name: string,
  attributes: Attributes,
  work: (span: Span) => Promise<T>,
): Promise<T> {
  return tracer.startActiveSpan(name, { attributes }, async (span) => {
    try {
      return await work(span);
    } catch (error) {
      span.setStatus({
        code: SpanStatusCode.ERROR,
        message: error instanceof Error ? error.name : 'error',
      });
      throw error;
    } finally {
      span.end();
    }
  });
}

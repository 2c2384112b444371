/**
 * OpenTelemetry tracing (loaded by preload.ts only when an OTLP endpoint is configured): the Node
 * SDK with the official instrumentations of what the gateway uses (node:http server and client,
 * Express, GraphQL, pg, undici, ioredis), spans exported in batches over OTLP/HTTP to the endpoint the
 * standard `OTEL_*` variables name. W3C `traceparent` from callers is continued, and passed on to
 * providers by the HTTP instrumentations. Provider calls are client spans with the GenAI semantic
 * conventions' attributes (GenAiTracer); job-monitor steps are spans linked to their job (JobStepSpans).
 *
 * No secret or prompt text reaches a span: the instrumentations record no header and no body, and
 * GraphQL's document text (which may hold prompt literals) is dropped before export.
 */
import { SpanKind, SpanStatusCode, TraceFlags, trace, type Context, type Span, type SpanContext } from '@opentelemetry/api';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { ExpressInstrumentation } from '@opentelemetry/instrumentation-express';
import { GraphQLInstrumentation } from '@opentelemetry/instrumentation-graphql';
import { HttpInstrumentation } from '@opentelemetry/instrumentation-http';
import { IORedisInstrumentation } from '@opentelemetry/instrumentation-ioredis';
import { PgInstrumentation } from '@opentelemetry/instrumentation-pg';
import { UndiciInstrumentation } from '@opentelemetry/instrumentation-undici';
import { NodeSDK, tracing } from '@opentelemetry/sdk-node';
import { GatewayError } from '../errors';
import type { ChatAnswer, ChatChunk, ChatUsage, OperationName } from '../providers/types';
import { setTelemetryShutdown, setTracers, type JobStep, type JobStepTracer, type ProviderTracer } from './tracing';

/** `gen_ai.system` of each provider, as the GenAI semantic conventions name them. */
const GEN_AI_SYSTEM: Record<string, string> = {
  openai: 'openai',
  'azure-openai': 'az.ai.openai',
  bedrock: 'aws.bedrock',
  'vertex-ai': 'gcp.vertex_ai',
  'fireworks-ai': 'fireworks_ai',
  'together-ai': 'together_ai',
};

/** Attributes that may carry caller text, removed from every span before export. */
const DROPPED_ATTRIBUTES = ['graphql.source'];

class Scrubbed implements tracing.SpanProcessor {
  constructor(private readonly next: tracing.SpanProcessor) {}
  onStart(span: tracing.Span, parent: Context): void {
    this.next.onStart(span, parent);
  }
  onEnd(span: tracing.ReadableSpan): void {
    // A finished span's attributes are a plain object; exporters read it after this.
    for (const name of DROPPED_ATTRIBUTES) delete (span.attributes as Record<string, unknown>)[name];
    this.next.onEnd(span);
  }
  forceFlush(): Promise<void> {
    return this.next.forceFlush();
  }
  shutdown(): Promise<void> {
    return this.next.shutdown();
  }
}

export function startTelemetry(): void {
  const sdk = new NodeSDK({
    serviceName: process.env.OTEL_SERVICE_NAME ?? 'model-gateway',
    spanProcessors: [new Scrubbed(new tracing.BatchSpanProcessor(new OTLPTraceExporter()))],
    instrumentations: [
      new HttpInstrumentation(),
      new ExpressInstrumentation(),
      new GraphQLInstrumentation({ ignoreTrivialResolveSpans: true, allowValues: false }),
      new PgInstrumentation(),
      new UndiciInstrumentation(),
      new IORedisInstrumentation(),
    ],
  });
  sdk.start();
  setTracers({ provider: new GenAiTracer(), jobSteps: new JobStepSpans() });
  setTelemetryShutdown(() => sdk.shutdown());
}

/** Provider calls as GenAI client spans: system, operation, request and response model, token usage. */
class GenAiTracer implements ProviderTracer {
  private readonly tracer = trace.getTracer('model-gateway');

  trace<T>(provider: string, operation: OperationName, requestModel: string | undefined, call: () => Promise<T>): Promise<T> {
    const name = `${operation}${requestModel ? ` ${requestModel}` : ''}`;
    const attributes = {
      'gen_ai.system': GEN_AI_SYSTEM[provider] ?? provider,
      'gen_ai.operation.name': operation,
      ...(requestModel ? { 'gen_ai.request.model': requestModel } : {}),
    };
    return this.tracer.startActiveSpan(name, { kind: SpanKind.CLIENT, attributes }, async (span) => {
      let value: T;
      try {
        value = await call();
      } catch (err) {
        endFailed(span, err);
        throw err;
      }
      if (operation !== 'chat') {
        span.end();
        return value;
      }
      return endedWithAnswer(span, value as ChatAnswer) as T;
    });
  }
}

/**
 * The context every step of one job links to: the job's id (a UUID: 32 hex digits) as trace id, so a
 * trace store finds all the steps of a job, on whichever replica they ran, by one id.
 */
function jobContext(jobId: string): SpanContext {
  const traceId = jobId.replace(/-/g, '').toLowerCase();
  return { traceId, spanId: traceId.slice(16), traceFlags: TraceFlags.SAMPLED, isRemote: true };
}

/** Job-monitor steps as internal spans, each the root of its trace, linked to its job. */
class JobStepSpans implements JobStepTracer {
  private readonly tracer = trace.getTracer('model-gateway');

  step<T>(step: JobStep, run: () => Promise<T>): Promise<T> {
    const attributes = {
      'gateway.fine_tuning.job.id': step.jobId,
      'gateway.fine_tuning.job.status': step.status,
      'gateway.fine_tuning.step': step.step,
      'gateway.fine_tuning.failed_attempts': step.failedAttempts,
      'gen_ai.system': GEN_AI_SYSTEM[step.provider] ?? step.provider,
    };
    const links = [{ context: jobContext(step.jobId), attributes: { 'gateway.link': 'fine_tuning.job' } }];
    // `root`: a step may be woken by a request (a job just created) but is not part of it.
    return this.tracer.startActiveSpan(`fine_tuning.job ${step.step}`, { kind: SpanKind.INTERNAL, root: true, attributes, links }, async (span) => {
      try {
        const value = await run();
        span.end();
        return value;
      } catch (err) {
        endFailed(span, err);
        throw err;
      }
    });
  }
}

/** The error's kind and status only: its message may quote what the provider said. */
function endFailed(span: Span, err: unknown): void {
  span.setAttribute('error.type', err instanceof GatewayError ? `${err.kind}_${err.status}` : 'internal');
  span.setStatus({ code: SpanStatusCode.ERROR });
  span.end();
}

function setUsage(span: Span, usage: ChatUsage | null): void {
  if (!usage) return;
  span.setAttributes({ 'gen_ai.usage.input_tokens': usage.promptTokens, 'gen_ai.usage.output_tokens': usage.completionTokens });
}

/** A whole answer ends the span now; a streamed one when its last chunk has been read (or the reader left). */
function endedWithAnswer(span: Span, answer: ChatAnswer): ChatAnswer {
  if (!answer.stream) {
    span.setAttributes({ 'gen_ai.response.model': answer.completion.model, 'gen_ai.response.id': answer.completion.id });
    setUsage(span, answer.completion.usage);
    span.end();
    return answer;
  }
  span.setAttributes({ 'gen_ai.response.model': answer.model, 'gen_ai.response.id': answer.id });
  return { ...answer, chunks: traced(span, answer.chunks) };
}

async function* traced(span: Span, chunks: AsyncIterable<ChatChunk>): AsyncGenerator<ChatChunk> {
  try {
    for await (const chunk of chunks) {
      if (chunk.type === 'usage') setUsage(span, chunk.usage);
      const finished = chunk.type === 'finish' || chunk.type === 'events' ? chunk.finishReason : undefined;
      if (finished) span.setAttribute('gen_ai.response.finish_reasons', [finished]);
      yield chunk;
    }
    span.end();
  } catch (err) {
    endFailed(span, err);
    throw err;
  } finally {
    // A reader that stopped early: the span ends with what was seen.
    if (span.isRecording()) span.end();
  }
}

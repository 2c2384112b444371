/**
 * What the gateway's code knows of tracing, without loading OpenTelemetry: the hook provider calls go
 * through, set only when tracing is on (src/telemetry/preload.ts). With tracing off nothing here
 * loads an OpenTelemetry module, and a provider call costs one null check.
 */
import type { OperationName } from '../providers/types';

export interface ProviderTracer {
  /**
   * Runs a provider call inside a client span (its HTTP requests become the span's children and carry
   * its `traceparent`); the span ends when the call ends, or when a streamed answer has been read.
   */
  trace<T>(provider: string, operation: OperationName, requestModel: string | undefined, call: () => Promise<T>): Promise<T>;
}

let active: ProviderTracer | null = null;

/** The provider tracer when tracing is on, else null. */
export const providerTracer = (): ProviderTracer | null => active;

export function setProviderTracer(tracer: ProviderTracer): void {
  active = tracer;
}

let shutdown: (() => Promise<void>) | null = null;

export function setTelemetryShutdown(stop: () => Promise<void>): void {
  shutdown = stop;
}

/** Exports the spans still buffered and stops tracing (at the gateway's stop); nothing when tracing is off. */
export async function stopTelemetry(): Promise<void> {
  await shutdown?.();
}

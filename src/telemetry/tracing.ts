/**
 * What the gateway's code knows of tracing, without loading OpenTelemetry: the hooks provider calls and
 * job-monitor steps go through, set only when tracing is on (src/telemetry/preload.ts). With tracing
 * off nothing here loads an OpenTelemetry module, and a provider call or a step costs one null check.
 */
import type { OperationName } from '../providers/types';

export interface ProviderTracer {
  /**
   * Runs a provider call inside a client span (its HTTP requests become the span's children and carry
   * its `traceparent`); the span ends when the call ends, or when a streamed answer has been read.
   */
  trace<T>(provider: string, operation: OperationName, requestModel: string | undefined, call: () => Promise<T>): Promise<T>;
}

/** What a job-monitor step's span says of its job: ids, states and counts, never settings or credentials. */
export interface JobStep {
  jobId: string;
  /** The ProviderName. */
  provider: string;
  /** The job's status when the step starts. */
  status: string;
  step: 'submit' | 'poll' | 'cancel' | 'settle';
  /** Failed steps in a row before this one. */
  failedAttempts: number;
}

export interface JobStepTracer {
  /**
   * Runs one step of the job monitor inside a span of its own trace (a step belongs to no request),
   * linked to the job: its provider calls and queries become the span's children.
   */
  step<T>(step: JobStep, run: () => Promise<T>): Promise<T>;
}

let active: { provider: ProviderTracer; jobSteps: JobStepTracer } | null = null;

/** The provider tracer when tracing is on, else null. */
export const providerTracer = (): ProviderTracer | null => active?.provider ?? null;

/** The job monitor's step tracer when tracing is on, else null. */
export const jobStepTracer = (): JobStepTracer | null => active?.jobSteps ?? null;

export function setTracers(tracers: { provider: ProviderTracer; jobSteps: JobStepTracer }): void {
  active = tracers;
}

let shutdown: (() => Promise<void>) | null = null;

export function setTelemetryShutdown(stop: () => Promise<void>): void {
  shutdown = stop;
}

/** Exports the spans still buffered and stops tracing (at the gateway's stop); nothing when tracing is off. */
export async function stopTelemetry(): Promise<void> {
  await shutdown?.();
}

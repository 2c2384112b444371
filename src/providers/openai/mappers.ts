/**
 * OpenAI wire objects ↔ the gateway's internal model. Pure functions, one per object, written as
 * field-to-field tables. Fields OpenAI may omit (older API versions, preview features) fall back to
 * null rather than undefined, so the internal model is always complete.
 */
import type {
  CreateJobInput,
  JobStatus,
  Page,
  ProviderCheckpoint,
  ProviderEvent,
  ProviderFile,
  ProviderJob,
} from '../types';

export interface OpenAIFile {
  id: string;
  object: 'file';
  bytes: number;
  created_at: number;
  filename: string;
  purpose: string;
  status?: string;
}

export interface OpenAIJob {
  id: string;
  object: 'fine_tuning.job';
  status: JobStatus;
  model: string;
  fine_tuned_model: string | null;
  trained_tokens?: number | null;
  error?: { code?: string | null; message?: string | null; param?: string | null } | null;
  created_at: number;
  finished_at?: number | null;
  estimated_finish?: number | null;
  hyperparameters?: Record<string, unknown> | null;
  result_files?: string[] | null;
  training_file: string;
  validation_file?: string | null;
  seed?: number | null;
  method?: Record<string, unknown> | null;
  suffix?: string | null;
  metadata?: Record<string, string> | null;
  organization_id?: string;
}

export interface OpenAIEvent {
  id: string;
  object: 'fine_tuning.job.event';
  created_at: number;
  level: string;
  message: string;
  type?: string | null;
  data?: unknown;
}

export interface OpenAICheckpoint {
  id: string;
  object: 'fine_tuning.job.checkpoint';
  created_at: number;
  fine_tuned_model_checkpoint: string;
  step_number: number;
  metrics?: Record<string, number> | null;
  fine_tuning_job_id: string;
}

export interface OpenAIList<T> {
  object: 'list';
  data: T[];
  has_more: boolean;
  first_id?: string | null;
  last_id?: string | null;
}

export const toFile = (f: OpenAIFile): ProviderFile => ({
  id: f.id,
  bytes: f.bytes,
  createdAt: f.created_at,
  filename: f.filename,
  purpose: f.purpose,
  status: f.status ?? 'processed',
});

export const toJob = (j: OpenAIJob): ProviderJob => ({
  id: j.id,
  status: j.status,
  model: j.model,
  fineTunedModel: j.fine_tuned_model ?? null,
  trainedTokens: j.trained_tokens ?? null,
  error: toJobError(j.error),
  createdAt: j.created_at,
  finishedAt: j.finished_at ?? null,
  estimatedFinish: j.estimated_finish ?? null,
  hyperparameters: j.hyperparameters ?? {},
  resultFiles: j.result_files ?? [],
  trainingFile: j.training_file,
  validationFile: j.validation_file ?? null,
  seed: j.seed ?? null,
  method: j.method ?? null,
  suffix: j.suffix ?? null,
  metadata: j.metadata ?? null,
});

/** OpenAI sometimes sends an error object with every field null for "no error". */
function toJobError(e: OpenAIJob['error']): ProviderJob['error'] {
  if (!e || (!e.message && !e.code)) return null;
  return { code: e.code ?? 'unknown', message: e.message ?? '', param: e.param ?? null };
}

const LEVELS: ReadonlySet<string> = new Set(['info', 'warn', 'error']);

export const toEvent = (e: OpenAIEvent): ProviderEvent => ({
  id: e.id,
  createdAt: e.created_at,
  level: (LEVELS.has(e.level) ? e.level : 'info') as ProviderEvent['level'],
  message: e.message,
  type: e.type ?? null,
  data: e.data ?? null,
});

export const toCheckpoint = (c: OpenAICheckpoint): ProviderCheckpoint => ({
  id: c.id,
  createdAt: c.created_at,
  fineTunedModelCheckpoint: c.fine_tuned_model_checkpoint,
  stepNumber: c.step_number,
  metrics: c.metrics ?? {},
  fineTuningJobId: c.fine_tuning_job_id,
});

export const toPage = <W, T>(list: OpenAIList<W>, map: (w: W) => T): Page<T> => ({
  data: list.data.map(map),
  hasMore: list.has_more,
});

/** The create body; unset optional fields are left out rather than sent as null. */
export function toCreateJobBody(input: CreateJobInput): Record<string, unknown> {
  const body: Record<string, unknown> = {
    model: input.model,
    training_file: input.trainingFile,
    validation_file: input.validationFile,
    suffix: input.suffix,
    seed: input.seed,
    method: input.method,
    hyperparameters: input.hyperparameters,
    metadata: input.metadata,
  };
  return Object.fromEntries(Object.entries(body).filter(([, v]) => v !== undefined));
}

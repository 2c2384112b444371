/**
 * OpenAI wire objects ↔ the gateway's internal model, for OpenAI and Azure OpenAI alike (Azure adds
 * statuses of its own). Pure functions, one per object, written as field-to-field tables. Fields a
 * provider may omit (older API versions, preview features) fall back to null rather than undefined,
 * so the internal model is always complete.
 */
import type {
  CreateJobInput,
  EventLevel,
  FileStatus,
  HyperparameterValue,
  Hyperparameters,
  JobMethod,
  JobStatus,
  ProviderCheckpoint,
  ProviderEvent,
  ProviderFile,
  ProviderJob,
  ProviderPage,
} from '../types';
import type { OpenAICompatibleConnection } from './connection';
import type { OpenAICheckpoint, OpenAIEvent, OpenAIFile, OpenAIJob, OpenAIList, WireHyperparameters } from './schemas';

/** OpenAI's hyperparameters object (also each method's), as sent. */
interface OpenAIHyperparameters {
  n_epochs?: HyperparameterValue;
  batch_size?: HyperparameterValue;
  learning_rate_multiplier?: HyperparameterValue;
  beta?: HyperparameterValue;
}

interface OpenAIMethod {
  type: string;
  supervised?: { hyperparameters?: OpenAIHyperparameters };
  dpo?: { hyperparameters?: OpenAIHyperparameters };
}

/**
 * OpenAI's statuses, and Azure's onto them: `pending`/`running` (Azure is still processing) are
 * `uploaded`; a file being deleted, or deleted, can no longer be used: `error`.
 */
const FILE_STATUS: Readonly<Record<string, FileStatus>> = {
  uploaded: 'uploaded',
  pending: 'uploaded',
  running: 'uploaded',
  processed: 'processed',
  error: 'error',
  deleting: 'error',
  deleted: 'error',
};

export const toFile = (f: OpenAIFile): ProviderFile => ({
  id: f.id,
  bytes: f.bytes ?? 0,
  createdAt: f.created_at,
  filename: f.filename,
  purpose: f.purpose,
  status: FILE_STATUS[f.status ?? 'processed'] ?? 'processed',
  ...(f.status && FILE_STATUS[f.status] !== f.status ? { providerStatus: f.status } : {}),
  statusDetails: f.status_details ?? null,
});

/** OpenAI's statuses are the gateway's; Azure's `created`/`pending` come before a job runs. */
const JOB_STATUS: Readonly<Record<string, JobStatus>> = {
  validating_files: 'validating_files',
  created: 'validating_files',
  pending: 'queued',
  queued: 'queued',
  running: 'running',
  succeeded: 'succeeded',
  failed: 'failed',
  cancelled: 'cancelled',
};

/** Azure answers `-1` for a hyperparameter nobody chose (its service picks one): OpenAI says "auto". */
const chosenOrAuto = (v: HyperparameterValue | null | undefined): HyperparameterValue | undefined =>
  typeof v === 'number' && v <= 0 ? 'auto' : (v ?? undefined);

export const toHyperparameters = (h: WireHyperparameters | null | undefined): Hyperparameters =>
  compact({
    nEpochs: chosenOrAuto(h?.n_epochs),
    batchSize: chosenOrAuto(h?.batch_size),
    learningRateMultiplier: chosenOrAuto(h?.learning_rate_multiplier),
    beta: chosenOrAuto(h?.beta),
  });

const fromHyperparameters = (h: Hyperparameters): OpenAIHyperparameters =>
  compact({ n_epochs: h.nEpochs, batch_size: h.batchSize, learning_rate_multiplier: h.learningRateMultiplier, beta: h.beta });

function toMethod(m: OpenAIJob['method']): JobMethod | null {
  if (m?.type === 'supervised') return { type: 'supervised', hyperparameters: toHyperparameters(m.supervised?.hyperparameters) };
  if (m?.type === 'dpo') return { type: 'dpo', hyperparameters: toHyperparameters(m.dpo?.hyperparameters) };
  return null;
}

/** Only the values the caller chose: "auto" is left out, which every API reads as "the provider chooses" (Azure refuses the word). */
const chosen = (h: Hyperparameters): OpenAIHyperparameters => {
  const numbers = (v: HyperparameterValue | undefined) => (typeof v === 'number' ? v : undefined);
  return fromHyperparameters({
    nEpochs: numbers(h.nEpochs),
    batchSize: numbers(h.batchSize),
    learningRateMultiplier: numbers(h.learningRateMultiplier),
    beta: numbers(h.beta),
  });
};

const fromMethod = (m: JobMethod): OpenAIMethod =>
  m.type === 'dpo'
    ? { type: 'dpo', dpo: { hyperparameters: chosen(m.hyperparameters) } }
    : { type: 'supervised', supervised: { hyperparameters: chosen(m.hyperparameters) } };

/** `account`: whose jobs these are when the answer does not say (Azure: the resource). */
export const toJob = (j: OpenAIJob, account?: string): ProviderJob => ({
  id: j.id,
  status: JOB_STATUS[j.status] ?? 'running',
  model: j.model,
  fineTunedModel: j.fine_tuned_model ?? null,
  servingModel: null,
  trainedTokens: j.trained_tokens ?? null,
  error: toJobError(j.error),
  createdAt: j.created_at,
  finishedAt: j.finished_at ?? null,
  estimatedFinish: j.estimated_finish ?? null,
  hyperparameters: toHyperparameters(j.hyperparameters),
  resultFiles: j.result_files ?? [],
  trainingFile: j.training_file,
  validationFile: j.validation_file ?? null,
  seed: j.seed ?? null,
  method: toMethod(j.method),
  suffix: j.suffix ?? null,
  metadata: j.metadata ?? null,
  organizationId: j.organization_id || j.organisation_id || account || null,
});

/** OpenAI sometimes sends an error object with every field null for "no error". */
function toJobError(e: OpenAIJob['error']): ProviderJob['error'] {
  if (!e || (!e.message && !e.code)) return null;
  return { code: e.code ?? 'unknown', message: e.message ?? '', param: e.param ?? null };
}

const LEVELS: Readonly<Record<string, EventLevel>> = { info: 'info', warn: 'warn', warning: 'warn', error: 'error' };

export const toEvent = (e: OpenAIEvent): ProviderEvent => ({
  id: e.id,
  createdAt: e.created_at,
  level: LEVELS[e.level] ?? 'info',
  message: e.message,
  type: e.type === 'metrics' ? 'metrics' : e.type === 'message' ? 'message' : null,
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

export const toPage = <W extends { id: string }, T>(list: OpenAIList<W>, map: (w: W) => T): ProviderPage<T> => ({
  data: list.data.map(map),
  hasMore: list.has_more ?? false,
  nextAfter: list.data.at(-1)?.id ?? null,
});

/**
 * The create body; unset optional fields are left out rather than sent as null. With `method` off
 * (Azure's 2024-10-21 API), or for a caller who used the legacy form, the hyperparameters go top-level.
 */
export function toCreateJobBody(
  input: CreateJobInput,
  dialect: Pick<OpenAICompatibleConnection, 'methodOnCreate' | 'metadataOnCreate'>,
): Record<string, unknown> {
  const topLevel = !dialect.methodOnCreate || input.legacyHyperparameters;
  return compact({
    model: input.model,
    training_file: input.trainingFile,
    validation_file: input.validationFile,
    suffix: input.suffix,
    seed: input.seed,
    method: input.method && !topLevel ? fromMethod(input.method) : undefined,
    hyperparameters: input.method && topLevel ? chosen(input.method.hyperparameters) : undefined,
    metadata: dialect.metadataOnCreate ? withGatewayJobId(input) : undefined,
  });
}

/** The metadata key carrying the gateway job id to the provider (to find the job after a crash). */
export const GATEWAY_JOB_ID_METADATA_KEY = 'gateway_job_id';

/** OpenAI allows 16 pairs: with 16 of the caller's, the stored provider job id alone guards resubmission. */
function withGatewayJobId({ metadata, gatewayJobId }: CreateJobInput): Record<string, string> | undefined {
  if (!gatewayJobId) return metadata;
  const pairs = { ...metadata };
  if (Object.keys(pairs).length < 16 || GATEWAY_JOB_ID_METADATA_KEY in pairs) pairs[GATEWAY_JOB_ID_METADATA_KEY] = gatewayJobId;
  return pairs;
}

/** The object without its undefined fields. */
function compact<T extends object>(o: T): Partial<T> {
  const out: Partial<T> = {};
  for (const key of Object.keys(o)) {
    const value: unknown = Reflect.get(o, key);
    if (value !== undefined) Object.assign(out, { [key]: value });
  }
  return out;
}

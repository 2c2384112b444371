/**
 * What Bedrock's model customization checks and produces, apart from HTTP and state, for the fake
 * Bedrock: the constraints of CreateModelCustomizationJob (Smithy patterns of the Bedrock API model
 * bedrock-2023-04-20), the hyperparameters each model family takes (all sent as strings), the
 * dataset record format each family expects (Bedrock user guide, "Prepare your training
 * datasets"), and the metrics a finished job writes (user guide, "Analyze the results of a model
 * customization job").
 */
import { Constraints, validationError } from './aws-rest-json';

export const JOB_NAME = /^[a-zA-Z0-9](-*[a-zA-Z0-9+\-.])*$/;
const CUSTOM_MODEL_NAME = /^([0-9a-zA-Z][_-]?){1,63}$/;
const ROLE_ARN = /^arn:aws(-[^:]+)?:iam::([0-9]{12})?:role\/.+$/;
export const IDEMPOTENCY_TOKEN = /^[a-zA-Z0-9](-*[a-zA-Z0-9])*$/;
/** A custom-model ARN, a foundation-model ARN, a model id, or a model name. */
const BASE_MODEL_IDENTIFIER = new RegExp(
  '^(arn:aws(-[^:]+)?:bedrock:[a-z0-9-]{1,20}:' +
    '(([0-9]{12}:custom-model/([a-z0-9-]{1,63}[.]{1}[a-z0-9-]{1,63}([.]?[a-z0-9-]{1,63})([:][a-z0-9-]{1,63}){0,2})/[a-z0-9]{12})' +
    '|(:foundation-model/[a-z0-9-]{1,63}[.]{1}[a-z0-9-]{1,63}([:][a-z0-9-]{1,63}){0,2})))' +
    '|([a-z0-9-]{1,63}[.]{1}[a-z0-9-]{1,63}([.]?[a-z0-9-]{1,63})([:][a-z0-9-]{1,63}){0,2})' +
    '|(([0-9a-zA-Z][_-]?)+)$',
);
const S3_URI = /^s3:\/\/[a-z0-9][-.a-z0-9]{1,61}[a-z0-9](?:\/[-!_*'().a-z0-9A-Z]+(?:\/[-!_*'().a-z0-9A-Z]+)*)?\/?$/;
export const CUSTOM_MODEL_ARN = new RegExp(
  '^arn:aws(-[^:]+)?:bedrock:[a-z0-9-]{1,20}:[0-9]{12}:custom-model/' +
    '(imported|[a-z0-9-]{1,63}[.]{1}[a-z0-9-]{1,63}([a-z0-9-]{1,63}[.]){0,2}[a-z0-9-]{1,63}([:][a-z0-9-]{1,63}){0,2})/[a-z0-9]{12}$',
);
export const DEPLOYMENT_NAME = /^([0-9a-zA-Z][_-]?){1,63}$/;
export const PROVISIONED_MODEL_NAME = /^([0-9a-zA-Z][_-]?)+$/;
const CUSTOMIZATION_TYPES = ['FINE_TUNING', 'CONTINUED_PRE_TRAINING', 'DISTILLATION', 'REINFORCEMENT_FINE_TUNING', 'IMPORTED'] as const;
/** The customization types the fake runs; the others need inputs (teacher models, reward functions) it does not model. */
const SUPPORTED_TYPES = ['FINE_TUNING', 'CONTINUED_PRE_TRAINING'];
const MAX_VALIDATORS = 10;
const S3_URI_RULE = { required: true, min: 1, max: 1024, pattern: S3_URI };

/** The hyperparameters each model family takes, and whether a value is an integer or any positive number. */
const HYPERPARAMETERS: Record<string, Record<string, 'integer' | 'number'>> = {
  anthropic: {
    epochCount: 'integer',
    batchSize: 'integer',
    learningRateMultiplier: 'number',
    earlyStoppingThreshold: 'number',
    earlyStoppingPatience: 'integer',
  },
  other: { epochCount: 'integer', batchSize: 'integer', learningRate: 'number', learningRateWarmupSteps: 'integer' },
};

export function parseS3Uri(uri: string): { bucket: string; key: string } {
  const rest = uri.slice('s3://'.length);
  const slash = rest.indexOf('/');
  return slash < 0 ? { bucket: rest, key: '' } : { bucket: rest.slice(0, slash), key: rest.slice(slash + 1) };
}

export interface CheckedJobRequest {
  baseModelId: string;
  customizationType: string;
  hyperParameters: Record<string, string>;
  trainingUri: string;
  validators: Array<{ s3Uri: string }>;
  outputUri: string;
}

function checkValidators(c: Constraints, config: unknown): void {
  if (!c.object('validationDataConfig', config)) return;
  const validators = config.validators;
  if (!Array.isArray(validators)) return c.fail('validationDataConfig.validators', validators, 'Member must not be null');
  if (validators.length > MAX_VALIDATORS) {
    return c.fail('validationDataConfig.validators', validators, `Member must have length less than or equal to ${MAX_VALIDATORS}`);
  }
  validators.forEach((validator, i) => {
    const path = `validationDataConfig.validators.${i + 1}.member`;
    if (c.object(path, validator, true)) c.string(`${path}.s3Uri`, validator.s3Uri, S3_URI_RULE);
  });
}

/** Hyperparameter values must be strings, and the base model's family must know each name and read its value as a positive number. */
function checkHyperParameters(c: Constraints, hyperParameters: unknown, baseModelId: string): Record<string, string> {
  if (!c.object('hyperParameters', hyperParameters)) return {};
  for (const [name, value] of Object.entries(hyperParameters)) {
    if (typeof value !== 'string') c.fail(`hyperParameters.${name}`, value, 'Member must be a string');
  }
  c.check();
  const known = HYPERPARAMETERS[baseModelId.split('.')[0]] ?? HYPERPARAMETERS.other;
  for (const [name, value] of Object.entries(hyperParameters as Record<string, string>)) {
    const kind = known[name];
    if (!kind) {
      throw validationError(`The hyperparameter ${name} is not supported for ${baseModelId}. Supported hyperparameters: ${Object.keys(known).join(', ')}.`);
    }
    const number = Number(value);
    if (value.trim() === '' || !Number.isFinite(number) || number <= 0 || (kind === 'integer' && !Number.isInteger(number))) {
      throw validationError(`The value '${value}' of hyperparameter ${name} is not a valid positive ${kind}.`);
    }
  }
  return hyperParameters as Record<string, string>;
}

/**
 * The checks of a CreateModelCustomizationJob body: member constraints first, reported together as
 * AWS does, then the base model (`baseModel` resolves an identifier to a customizable model id or
 * throws), its hyperparameters and the customization type.
 */
export function checkCreateJobRequest(body: Record<string, unknown>, baseModel: (identifier: string) => string): CheckedJobRequest {
  const c = new Constraints();
  c.string('jobName', body.jobName, { required: true, min: 1, max: 63, pattern: JOB_NAME });
  c.string('customModelName', body.customModelName, { required: true, min: 1, max: 63, pattern: CUSTOM_MODEL_NAME });
  c.string('roleArn', body.roleArn, { required: true, max: 2048, pattern: ROLE_ARN });
  c.string('clientRequestToken', body.clientRequestToken, { min: 1, max: 256, pattern: IDEMPOTENCY_TOKEN });
  c.string('baseModelIdentifier', body.baseModelIdentifier, { required: true, min: 1, max: 2048, pattern: BASE_MODEL_IDENTIFIER });
  c.string('customizationType', body.customizationType, { enum: CUSTOMIZATION_TYPES });
  if (c.object('trainingDataConfig', body.trainingDataConfig, true)) c.string('trainingDataConfig.s3Uri', body.trainingDataConfig.s3Uri, S3_URI_RULE);
  if (c.object('outputDataConfig', body.outputDataConfig, true)) c.string('outputDataConfig.s3Uri', body.outputDataConfig.s3Uri, S3_URI_RULE);
  checkValidators(c, body.validationDataConfig);
  c.check();

  const baseModelId = baseModel(body.baseModelIdentifier as string);
  const hyperParameters = checkHyperParameters(c, body.hyperParameters, baseModelId);
  const customizationType = (body.customizationType as string | undefined) ?? 'FINE_TUNING';
  if (!SUPPORTED_TYPES.includes(customizationType)) throw validationError(`This fake runs ${SUPPORTED_TYPES.join(' and ')} jobs, not ${customizationType}.`);
  const validators = (body.validationDataConfig as { validators?: Array<{ s3Uri: string }> } | undefined)?.validators ?? [];
  return {
    baseModelId,
    customizationType,
    hyperParameters,
    trainingUri: (body.trainingDataConfig as { s3Uri: string }).s3Uri,
    validators: validators.map((v) => ({ s3Uri: v.s3Uri })),
    outputUri: (body.outputDataConfig as { s3Uri: string }).s3Uri,
  };
}

export const nonEmptyLines = (bytes: Buffer) =>
  bytes
    .toString('utf8')
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '');

const isText = (value: unknown) => typeof value === 'string';

/** user, assistant, user, assistant…: at least one exchange, ending with the assistant. */
const alternating = (messages: Array<{ role?: unknown }>) =>
  messages.length >= 2 && messages.length % 2 === 0 && messages.every((m, i) => m.role === (i % 2 === 0 ? 'user' : 'assistant'));

/** Whether one dataset record has the shape Bedrock expects for the base model's family and the customization type. */
function recordMatches(record: Record<string, unknown>, baseModelId: string, customizationType: string): boolean {
  if (customizationType === 'CONTINUED_PRE_TRAINING') return isText(record.input);
  const messages = Array.isArray(record.messages) ? (record.messages as Array<{ role?: unknown; content?: unknown }>) : undefined;
  if (baseModelId.startsWith('amazon.nova')) {
    // The Converse format: `{schemaVersion: "bedrock-conversation-2024", system?: [{text}], messages: [{role, content: [{text}]}]}`.
    const textBlocks = (content: unknown) =>
      Array.isArray(content) && content.length > 0 && content.every((block) => isText((block as { text?: unknown } | null)?.text));
    return record.schemaVersion === 'bedrock-conversation-2024' && !!messages && alternating(messages) && messages.every((m) => textBlocks(m.content));
  }
  if (baseModelId.startsWith('anthropic.')) {
    // `{system?: string, messages: [{role, content: string}]}` and nothing else.
    const onlyKnownKeys = Object.keys(record).every((key) => key === 'system' || key === 'messages');
    const systemOk = record.system === undefined || isText(record.system);
    return onlyKnownKeys && systemOk && !!messages && alternating(messages) && messages.every((m) => isText(m.content));
  }
  return isText(record.prompt) && isText(record.completion);
}

/** Why a training dataset fails Bedrock's validation step, or undefined when it passes. */
export function datasetProblem(bytes: Buffer | undefined, uri: string, baseModelId: string, customizationType: string): string | undefined {
  if (!bytes) return `Unable to read the training data at ${uri}: the object does not exist.`;
  const lines = nonEmptyLines(bytes);
  if (lines.length === 0) return `The training data at ${uri} contains no records.`;
  for (const [i, line] of lines.entries()) {
    let record: unknown;
    try {
      record = JSON.parse(line);
    } catch {
      return `Data validation failed: line ${i + 1} of ${uri} is not valid JSON.`;
    }
    const isObject = !!record && typeof record === 'object' && !Array.isArray(record);
    if (!isObject || !recordMatches(record as Record<string, unknown>, baseModelId, customizationType)) {
      return `Data validation failed: line ${i + 1} of ${uri} does not match the record format of ${baseModelId} for ${customizationType}.`;
    }
  }
  return undefined;
}

export interface MetricRow {
  step: number;
  epoch: number;
  loss: number;
}

/**
 * A deterministic training run: `epochCount` epochs (default 2) of one step per batch of examples
 * (`batchSize`, default 8; at most 10 steps an epoch, to keep the CSVs small), the loss falling.
 */
export function trainingRun(examples: number, hyperParameters: Record<string, string>): MetricRow[] {
  const epochs = Number(hyperParameters.epochCount ?? 2);
  const stepsPerEpoch = Math.min(10, Math.max(1, Math.ceil(examples / Number(hyperParameters.batchSize ?? 8))));
  return Array.from({ length: epochs * stepsPerEpoch }, (_, step) => ({
    step,
    epoch: Math.floor(step / stepsPerEpoch),
    loss: Number((0.2 + 2 * 0.85 ** step).toFixed(4)),
  }));
}

/** Validation at the end of each epoch, a little above the training loss. */
export const validationRun = (training: MetricRow[]): MetricRow[] =>
  training.filter((row, i) => training[i + 1]?.epoch !== row.epoch).map((row) => ({ ...row, loss: Number((row.loss + 0.05).toFixed(4)) }));

/** Bedrock's metrics CSV: `step_number,epoch_number,<loss column>,perplexity` (step numbers from 0). */
export const metricsCsv = (lossColumn: 'training_loss' | 'validation_loss', rows: MetricRow[]) =>
  [`step_number,epoch_number,${lossColumn},perplexity`, ...rows.map((r) => `${r.step},${r.epoch},${r.loss},${Math.exp(r.loss).toFixed(4)}`)].join('\n') + '\n';

/**
 * A fake AWS Bedrock for tests: three loopback servers sharing one state —
 * - S3, path-style (s3-server.ts): where datasets go and job outputs come back;
 * - the Bedrock control plane (restJson1): model customization jobs, custom model deployments,
 *   provisioned throughput, batch inference (model invocation jobs, bedrock-batch.ts);
 * - the Bedrock runtime (restJson1, HTTP/1.1 and cleartext HTTP/2): Converse and ConverseStream.
 * Every request must be SigV4-signed with the test credentials (signing name `s3` on S3, `bedrock`
 * on both Bedrock ports); the signature is recomputed, not only looked at (sigv4.ts).
 *
 * A customization job validates its request as Bedrock does (required members, Smithy patterns,
 * string-valued hyperparameters the base model knows, training data that exists in the fake S3),
 * then advances one step per GET of the job (or `advance()`): validation → data processing →
 * training → Completed, with `outputModelArn`, metrics, and the metrics CSVs written under the
 * output S3 prefix. A dataset whose lines do not match the base model's format, or `failJob()`,
 * makes the job Failed; `stop` goes Stopping → Stopped. A custom model answers Converse only through
 * an Active custom model deployment or an InService provisioned throughput (or `registerDeployment()`).
 */
import { randomBytes } from 'node:crypto';
import {
  Constraints,
  conflict,
  jsonBody,
  notFound,
  pathSegment,
  listJobsPage,
  startAwsJsonServer,
  validationError,
  type AwsJsonRequest,
} from './aws-rest-json';
import {
  checkCreateJobRequest,
  CUSTOM_MODEL_ARN,
  datasetProblem,
  DEPLOYMENT_NAME,
  IDEMPOTENCY_TOKEN,
  JOB_NAME,
  metricsCsv,
  nonEmptyLines,
  parseS3Uri,
  PROVISIONED_MODEL_NAME,
  trainingRun,
  validationRun,
} from './bedrock-customization';
import { createInvocationJobs, DEFAULT_MIN_RECORDS } from './bedrock-batch';
import { runtimeRoute, type ConverseCall } from './bedrock-runtime';
import type { FakeReply } from './kit';
import { startFakeS3 } from './s3-server';
import { TEST_AWS_CREDENTIALS, type AwsCredentials } from './sigv4';

export type JobStatus = 'InProgress' | 'Completed' | 'Failed' | 'Stopping' | 'Stopped';
export type StepStatus = 'InProgress' | 'Completed' | 'Stopping' | 'Stopped' | 'Failed' | 'NotStarted';

/** The three steps of `statusDetails`, in the order a job goes through them. */
const STEPS = ['validationDetails', 'dataProcessingDetails', 'trainingDetails'] as const;
type Step = (typeof STEPS)[number];

export interface FakeCustomizationJob {
  jobArn: string;
  jobName: string;
  outputModelName: string;
  outputModelArn?: string;
  clientRequestToken?: string;
  roleArn: string;
  status: JobStatus;
  statusDetails: Record<Step, { status: StepStatus; creationTime: Date; lastModifiedTime: Date }>;
  failureMessage?: string;
  creationTime: Date;
  lastModifiedTime: Date;
  endTime?: Date;
  baseModelArn: string;
  hyperParameters: Record<string, string>;
  trainingDataConfig: { s3Uri: string };
  validationDataConfig: { validators: Array<{ s3Uri: string }> };
  outputDataConfig: { s3Uri: string };
  customizationType: string;
  trainingMetrics?: { trainingLoss: number };
  validationMetrics?: Array<{ validationLoss: number }>;
  vpcConfig?: unknown;
  outputModelKmsKeyArn?: string;
  /** The CreateModelCustomizationJob body exactly as received (never sent back). */
  request: Record<string, unknown>;
  /** Set by `failJob`: the job fails at its next step with this message (never sent back). */
  pendingFailure?: string;
}

export interface FakeCustomModel {
  modelArn: string;
  modelName: string;
  baseModelId: string;
  jobArn?: string;
}

export interface FakeDeployment {
  customModelDeploymentArn: string;
  modelDeploymentName: string;
  modelArn: string;
  createdAt: Date;
  status: 'Creating' | 'Active' | 'Failed';
  description?: string;
  lastUpdatedAt: Date;
  clientRequestToken?: string;
}

export interface FakeProvisionedModel {
  provisionedModelArn: string;
  provisionedModelName: string;
  modelArn: string;
  desiredModelArn: string;
  foundationModelArn: string;
  modelUnits: number;
  desiredModelUnits: number;
  status: 'Creating' | 'InService' | 'Updating' | 'Failed';
  creationTime: Date;
  lastModifiedTime: Date;
  commitmentDuration?: string;
  clientRequestToken?: string;
}

export interface FakeBedrockOptions {
  region?: string;
  /** The 12-digit account in every ARN the fake makes. */
  accountId?: string;
  /** Credentials requests may be signed with (default: TEST_AWS_CREDENTIALS). */
  credentials?: AwsCredentials[];
  /** Buckets that exist in the fake S3 (default: `fake-bedrock-data`). */
  buckets?: string[];
  /** Base models a customization job accepts, by id (the id's provider picks the dataset format and hyperparameters). */
  customizableModels?: string[];
  /** Foundation models Converse serves on demand. */
  foundationModels?: string[];
  /** Lifecycle steps a job, deployment or provisioned throughput advances per GET of it. */
  stepsPerPoll?: number;
  /** The minimum number of records of a batch inference job (default 100). */
  minBatchRecords?: number;
  /** Records an InProgress batch inference job runs per step (default: all of them). */
  batchRecordsPerStep?: number;
  /** Pause between ConverseStream events, so a test can observe streaming and hang up midway. */
  streamDelayMs?: number;
}

export const DEFAULT_BUCKET = 'fake-bedrock-data';
export const DEFAULT_ACCOUNT_ID = '123456789012';

/** Base model ids as `CreateModelCustomizationJob` takes them (the fine-tunable variants carry a context-size suffix). */
export const CUSTOMIZABLE_MODELS = [
  'amazon.nova-micro-v1:0:128k',
  'amazon.nova-lite-v1:0:300k',
  'amazon.nova-pro-v1:0:300k',
  'amazon.titan-text-express-v1:0:8k',
  'amazon.titan-text-lite-v1:0:4k',
  'anthropic.claude-3-haiku-20240307-v1:0:200k',
  'meta.llama3-1-8b-instruct-v1:0:128k',
  'meta.llama3-1-70b-instruct-v1:0:128k',
];

export const FOUNDATION_MODELS = [
  'amazon.nova-micro-v1:0',
  'amazon.nova-lite-v1:0',
  'amazon.nova-pro-v1:0',
  'amazon.titan-text-express-v1',
  'anthropic.claude-3-haiku-20240307-v1:0',
  'anthropic.claude-3-5-sonnet-20240620-v1:0',
  'meta.llama3-1-8b-instruct-v1:0',
];

const JOB_STATUSES = ['InProgress', 'Completed', 'Failed', 'Stopping', 'Stopped'] as const;
const TERMINAL = new Set<JobStatus>(['Completed', 'Failed', 'Stopped']);

/** 12 characters of `[a-z0-9]`, as in the ids at the end of Bedrock's ARNs. */
function shortId(): string {
  const alphabet = 'abcdefghijklmnopqrstuvwxyz0123456789';
  return [...randomBytes(12)].map((b) => alphabet[b % alphabet.length]).join('');
}

export async function startFakeBedrock(opts: FakeBedrockOptions = {}) {
  const region = opts.region ?? 'us-east-1';
  const accountId = opts.accountId ?? DEFAULT_ACCOUNT_ID;
  const credentials = opts.credentials ?? [TEST_AWS_CREDENTIALS];
  const customizable = opts.customizableModels ?? CUSTOMIZABLE_MODELS;
  const foundation = opts.foundationModels ?? FOUNDATION_MODELS;
  const stepsPerPoll = opts.stepsPerPoll ?? 1;
  const arn = (resource: string) => `arn:aws:bedrock:${region}:${accountId}:${resource}`;
  const FOUNDATION_ARN_PREFIX = `arn:aws:bedrock:${region}::foundation-model/`;
  const foundationArn = (modelId: string) => `${FOUNDATION_ARN_PREFIX}${modelId}`;

  const s3 = await startFakeS3({ region, credentials, buckets: opts.buckets ?? [DEFAULT_BUCKET] });
  const state = {
    /** Customization jobs by job ARN, oldest first. */
    jobs: new Map<string, FakeCustomizationJob>(),
    /** Custom models made by completed jobs (or registered by a test), by model ARN. */
    customModels: new Map<string, FakeCustomModel>(),
    deployments: new Map<string, FakeDeployment>(),
    provisionedModels: new Map<string, FakeProvisionedModel>(),
    /** Every CreateModelCustomizationJob body as received, accepted or not. */
    createJobRequests: [] as Array<Record<string, unknown>>,
    /** Every Converse / ConverseStream call as received. */
    converseCalls: [] as ConverseCall[],
    /** ConverseStream answers the client hung up on before the last event. */
    abandonedStreams: 0,
    s3: s3.state,
  };

  // ---- customization jobs ----

  function findJob(identifier: string): FakeCustomizationJob {
    const job = state.jobs.get(identifier) ?? [...state.jobs.values()].find((j) => j.jobName === identifier);
    if (!job) throw notFound(`Could not find the model customization job ${identifier}.`);
    return job;
  }

  const baseModelIdOf = (job: FakeCustomizationJob) => job.baseModelArn.slice(job.baseModelArn.indexOf('/') + 1);
  const jobIdOf = (job: FakeCustomizationJob) => job.jobArn.slice(job.jobArn.lastIndexOf('/') + 1);

  /** A `baseModelIdentifier` (id or foundation-model ARN) as a customizable model id, or a ValidationException. */
  function customizableModel(identifier: string): string {
    const id = identifier.startsWith(FOUNDATION_ARN_PREFIX) ? identifier.slice(FOUNDATION_ARN_PREFIX.length) : identifier;
    if (!customizable.includes(id)) {
      throw validationError(`The provided model identifier is invalid: ${identifier} is not a base model that can be customized in ${region}.`);
    }
    return id;
  }

  /** Bedrock reads the data with the job's role at creation: a missing object or bucket is refused then. */
  function checkS3Access(trainingUri: string, validators: Array<{ s3Uri: string }>, outputUri: string): void {
    for (const uri of [trainingUri, ...validators.map((v) => v.s3Uri)]) {
      const { bucket, key } = parseS3Uri(uri);
      if (s3.getObject(bucket, key) === undefined) {
        throw validationError(`Unable to access the S3 object at ${uri}. Check that it exists and that the role can read it.`);
      }
    }
    if (!s3.state.buckets.has(parseS3Uri(outputUri).bucket)) {
      throw validationError(`Unable to access the output S3 location ${outputUri}. Check that the bucket exists and that the role can write to it.`);
    }
  }

  function createJob(body: Record<string, unknown>): FakeReply {
    state.createJobRequests.push(body);
    const checked = checkCreateJobRequest(body, customizableModel);
    const token = body.clientRequestToken as string | undefined;
    const replay = token ? [...state.jobs.values()].find((j) => j.clientRequestToken === token) : undefined;
    if (replay) return { status: 201, body: { jobArn: replay.jobArn } };
    if ([...state.jobs.values()].some((j) => j.jobName === body.jobName)) {
      throw conflict(`A model customization job with the name ${String(body.jobName)} already exists.`);
    }
    checkS3Access(checked.trainingUri, checked.validators, checked.outputUri);

    const now = new Date();
    const step = (status: StepStatus) => ({ status, creationTime: now, lastModifiedTime: now });
    const job: FakeCustomizationJob = {
      jobArn: arn(`model-customization-job/${checked.baseModelId}/${shortId()}`),
      jobName: body.jobName as string,
      outputModelName: body.customModelName as string,
      clientRequestToken: token,
      roleArn: body.roleArn as string,
      status: 'InProgress',
      statusDetails: { validationDetails: step('InProgress'), dataProcessingDetails: step('NotStarted'), trainingDetails: step('NotStarted') },
      creationTime: now,
      lastModifiedTime: now,
      baseModelArn: foundationArn(checked.baseModelId),
      hyperParameters: checked.hyperParameters,
      trainingDataConfig: { s3Uri: checked.trainingUri },
      validationDataConfig: { validators: checked.validators },
      outputDataConfig: { s3Uri: checked.outputUri },
      customizationType: checked.customizationType,
      vpcConfig: body.vpcConfig,
      request: body,
    };
    state.jobs.set(job.jobArn, job);
    return { status: 201, body: { jobArn: job.jobArn } };
  }

  const trainingData = (job: FakeCustomizationJob) => {
    const { bucket, key } = parseS3Uri(job.trainingDataConfig.s3Uri);
    return s3.getObject(bucket, key);
  };

  const datasetProblemOf = (job: FakeCustomizationJob) =>
    datasetProblem(trainingData(job), job.trainingDataConfig.s3Uri, baseModelIdOf(job), job.customizationType);

  const currentStep = (job: FakeCustomizationJob) => STEPS.find((s) => ['InProgress', 'Stopping'].includes(job.statusDetails[s].status));

  function setStep(job: FakeCustomizationJob, step: Step, status: StepStatus, now: Date) {
    job.statusDetails[step] = { ...job.statusDetails[step], status, lastModifiedTime: now };
    if (status === 'InProgress') job.statusDetails[step].creationTime = now;
  }

  function finish(job: FakeCustomizationJob, status: JobStatus, now: Date, failureMessage?: string) {
    job.status = status;
    job.endTime = now;
    if (failureMessage) job.failureMessage = failureMessage;
  }

  /** One lifecycle step of a job. */
  function advanceJob(job: FakeCustomizationJob): void {
    const step = currentStep(job);
    if (TERMINAL.has(job.status) || !step) return;
    const now = new Date();
    job.lastModifiedTime = now;
    if (job.status === 'Stopping') {
      setStep(job, step, 'Stopped', now);
      return finish(job, 'Stopped', now);
    }
    const failure = job.pendingFailure ?? (step === 'validationDetails' ? datasetProblemOf(job) : undefined);
    if (failure) {
      setStep(job, step, 'Failed', now);
      return finish(job, 'Failed', now, failure);
    }
    setStep(job, step, 'Completed', now);
    const next = STEPS[STEPS.indexOf(step) + 1];
    if (next) setStep(job, next, 'InProgress', now);
    else complete(job, now);
  }

  /** The last step done: the custom model exists, and the metrics CSVs are under the output prefix. */
  function complete(job: FakeCustomizationJob, now: Date) {
    const training = trainingRun(nonEmptyLines(trainingData(job) ?? Buffer.alloc(0)).length, job.hyperParameters);
    job.outputModelArn = arn(`custom-model/${baseModelIdOf(job)}/${shortId()}`);
    job.trainingMetrics = { trainingLoss: training.at(-1)!.loss };
    const { bucket, key } = parseS3Uri(job.outputDataConfig.s3Uri);
    const folder = `${key.replace(/\/?$/, '/').replace(/^\/$/, '')}model-customization-job-${jobIdOf(job)}/`;
    s3.putObject(bucket, `${folder}training_artifacts/step_wise_training_metrics.csv`, metricsCsv('training_loss', training), 'text/csv');
    if (job.validationDataConfig.validators.length > 0) {
      const validation = validationRun(training);
      const csv = metricsCsv('validation_loss', validation);
      s3.putObject(bucket, `${folder}validation_artifacts/post_fine_tuning_validation/validation_metrics.csv`, csv, 'text/csv');
      job.validationMetrics = job.validationDataConfig.validators.map(() => ({ validationLoss: validation.at(-1)!.loss }));
    }
    const model = { modelArn: job.outputModelArn, modelName: job.outputModelName, baseModelId: baseModelIdOf(job), jobArn: job.jobArn };
    state.customModels.set(model.modelArn, model);
    finish(job, 'Completed', now);
  }

  const jobResponse = ({ request: _request, pendingFailure: _pending, ...job }: FakeCustomizationJob) => job;

  function jobSummary(job: FakeCustomizationJob) {
    return {
      jobArn: job.jobArn,
      baseModelArn: job.baseModelArn,
      jobName: job.jobName,
      status: job.status,
      statusDetails: job.statusDetails,
      lastModifiedTime: job.lastModifiedTime,
      creationTime: job.creationTime,
      endTime: job.endTime,
      customModelArn: job.outputModelArn,
      customModelName: job.outputModelName,
      customizationType: job.customizationType,
    };
  }

  function listJobs(query: URLSearchParams): FakeReply {
    const view = (j: FakeCustomizationJob) => ({ name: j.jobName, status: j.status, time: j.creationTime });
    const rules = { statuses: JOB_STATUSES, timeParam: 'creationTime', namePattern: JOB_NAME };
    const { page, nextToken } = listJobsPage([...state.jobs.values()], view, query, rules);
    return { status: 200, body: { modelCustomizationJobSummaries: page.map(jobSummary), nextToken } };
  }

  function stopJob(job: FakeCustomizationJob): FakeReply {
    if (TERMINAL.has(job.status)) {
      throw validationError(`The model customization job ${job.jobName} is ${job.status} and cannot be stopped.`);
    }
    const step = currentStep(job)!;
    const now = new Date();
    job.status = 'Stopping';
    job.lastModifiedTime = now;
    setStep(job, step, 'Stopping', now);
    return { status: 200, body: {} };
  }

  // ---- making a custom model invocable ----

  function findCustomModel(modelArn: string): FakeCustomModel {
    const model = state.customModels.get(modelArn);
    if (!model) throw notFound(`The custom model ${modelArn} was not found.`);
    return model;
  }

  function createDeployment(body: Record<string, unknown>): FakeReply {
    const c = new Constraints();
    c.string('modelDeploymentName', body.modelDeploymentName, { required: true, min: 1, max: 63, pattern: DEPLOYMENT_NAME });
    c.string('modelArn', body.modelArn, { required: true, min: 20, max: 1011, pattern: CUSTOM_MODEL_ARN });
    c.string('description', body.description, { min: 1, max: 2048 });
    c.string('clientRequestToken', body.clientRequestToken, { min: 1, max: 256, pattern: IDEMPOTENCY_TOKEN });
    c.check();
    const token = body.clientRequestToken as string | undefined;
    const replay = token ? [...state.deployments.values()].find((d) => d.clientRequestToken === token) : undefined;
    if (replay) return { status: 202, body: { customModelDeploymentArn: replay.customModelDeploymentArn } };
    findCustomModel(body.modelArn as string);
    const deployment = addDeployment(body.modelArn as string, body.modelDeploymentName as string, 'Creating', token);
    deployment.description = body.description as string | undefined;
    return { status: 202, body: { customModelDeploymentArn: deployment.customModelDeploymentArn } };
  }

  function addDeployment(modelArn: string, name: string, status: FakeDeployment['status'], clientRequestToken?: string): FakeDeployment {
    const now = new Date();
    const deployment: FakeDeployment = {
      customModelDeploymentArn: arn(`custom-model-deployment/${shortId()}`),
      modelDeploymentName: name,
      modelArn,
      createdAt: now,
      status,
      lastUpdatedAt: now,
      clientRequestToken,
    };
    state.deployments.set(deployment.customModelDeploymentArn, deployment);
    return deployment;
  }

  function findDeployment(identifier: string): FakeDeployment {
    const deployment = state.deployments.get(identifier) ?? [...state.deployments.values()].find((d) => d.modelDeploymentName === identifier);
    if (!deployment) throw notFound(`The custom model deployment ${identifier} was not found.`);
    return deployment;
  }

  function createProvisionedThroughput(body: Record<string, unknown>): FakeReply {
    const c = new Constraints();
    c.integer('modelUnits', body.modelUnits, { required: true, min: 1 });
    c.string('provisionedModelName', body.provisionedModelName, { required: true, min: 1, max: 63, pattern: PROVISIONED_MODEL_NAME });
    c.string('modelId', body.modelId, { required: true, min: 1, max: 2048 });
    c.string('commitmentDuration', body.commitmentDuration, { enum: ['OneMonth', 'SixMonths'] });
    c.string('clientRequestToken', body.clientRequestToken, { min: 1, max: 256, pattern: IDEMPOTENCY_TOKEN });
    c.check();
    const token = body.clientRequestToken as string | undefined;
    const replay = token ? [...state.provisionedModels.values()].find((p) => p.clientRequestToken === token) : undefined;
    if (replay) return { status: 201, body: { provisionedModelArn: replay.provisionedModelArn } };
    const model = findCustomModel(body.modelId as string);
    const now = new Date();
    const provisioned: FakeProvisionedModel = {
      provisionedModelArn: arn(`provisioned-model/${shortId()}`),
      provisionedModelName: body.provisionedModelName as string,
      modelArn: model.modelArn,
      desiredModelArn: model.modelArn,
      foundationModelArn: foundationArn(model.baseModelId),
      modelUnits: body.modelUnits as number,
      desiredModelUnits: body.modelUnits as number,
      status: 'Creating',
      creationTime: now,
      lastModifiedTime: now,
      commitmentDuration: body.commitmentDuration as string | undefined,
      clientRequestToken: token,
    };
    state.provisionedModels.set(provisioned.provisionedModelArn, provisioned);
    return { status: 201, body: { provisionedModelArn: provisioned.provisionedModelArn } };
  }

  function findProvisioned(identifier: string): FakeProvisionedModel {
    const found = state.provisionedModels.get(identifier) ?? [...state.provisionedModels.values()].find((p) => p.provisionedModelName === identifier);
    if (!found) throw notFound(`The provisioned model ${identifier} was not found.`);
    return found;
  }

  /** Creating becomes Active / InService at the next GET of the resource, like a job's steps; the answer leaves out the fake's bookkeeping. */
  function ready<T extends { status: string; clientRequestToken?: string }>(resource: T, readyStatus: T['status'], touch: (r: T, at: Date) => void): FakeReply {
    if (resource.status === 'Creating') {
      resource.status = readyStatus;
      touch(resource, new Date());
    }
    const { clientRequestToken: _token, ...wire } = resource;
    return { status: 200, body: wire };
  }

  /** The runtime's check of a Converse `modelId`: a foundation model, or an Active deployment / InService provisioned model. */
  function checkInvocable(modelId: string): void {
    const foundationId = modelId.startsWith(FOUNDATION_ARN_PREFIX) ? modelId.slice(FOUNDATION_ARN_PREFIX.length) : modelId;
    if (foundation.includes(foundationId)) return;
    if (/^arn:aws:bedrock:[a-z0-9-]+:\d{12}:custom-model\//.test(modelId)) {
      const message = 'Invocation of a custom model on demand is not supported. Create a custom model deployment or purchase Provisioned Throughput for it';
      throw validationError(`${message}, and use that ARN as the modelId.`);
    }
    const serving = state.deployments.get(modelId) ?? state.provisionedModels.get(modelId);
    if (serving?.status === 'Active' || serving?.status === 'InService') return;
    if (serving) {
      throw validationError(`The model ${modelId} is ${serving.status}; it serves requests once it is Active (a deployment) or InService (provisioned).`);
    }
    throw validationError('The provided model identifier is invalid.');
  }

  /** ListFoundationModels: every foundation model answers Converse on demand with text out, so the filters keep them all. */
  function foundationModels(query: URLSearchParams) {
    const keeps = (query.get('byOutputModality') ?? 'TEXT') === 'TEXT' && (query.get('byInferenceType') ?? 'ON_DEMAND') === 'ON_DEMAND';
    return (keeps ? foundation : []).map((modelId) => ({
      modelArn: foundationArn(modelId),
      modelId,
      modelName: modelId,
      providerName: ({ amazon: 'Amazon', anthropic: 'Anthropic', meta: 'Meta' } as Record<string, string>)[modelId.split('.')[0]] ?? modelId.split('.')[0],
      inputModalities: ['TEXT'],
      outputModalities: ['TEXT'],
      responseStreamingSupported: true,
      inferenceTypesSupported: ['ON_DEMAND'],
      modelLifecycle: { status: 'ACTIVE' },
    }));
  }

  const invocationJobs = createInvocationJobs({
    s3,
    arn,
    foundationModels: foundation,
    minRecords: opts.minBatchRecords ?? DEFAULT_MIN_RECORDS,
    recordsPerStep: opts.batchRecordsPerStep ?? Infinity,
    stepsPerPoll,
  });

  type Handler = (id: string, request: AwsJsonRequest) => FakeReply;
  const controlRoutes: Array<[string, RegExp, Handler]> = [
    ['GET', /^\/foundation-models$/, (_, r) => ({ status: 200, body: { modelSummaries: foundationModels(r.query) } })],
    ...invocationJobs.routes,
    ['POST', /^\/model-customization-jobs$/, (_, r) => createJob(jsonBody(r.body))],
    ['GET', /^\/model-customization-jobs$/, (_, r) => listJobs(r.query)],
    [
      'GET',
      /^\/model-customization-jobs\/([^/]+)$/,
      (id) => {
        const job = findJob(id);
        for (let i = 0; i < stepsPerPoll; i++) advanceJob(job);
        return { status: 200, body: jobResponse(job) };
      },
    ],
    ['POST', /^\/model-customization-jobs\/([^/]+)\/stop$/, (id) => stopJob(findJob(id))],
    ['POST', /^\/model-customization\/custom-model-deployments$/, (_, r) => createDeployment(jsonBody(r.body))],
    ['GET', /^\/model-customization\/custom-model-deployments\/([^/]+)$/, (id) => ready(findDeployment(id), 'Active', (d, at) => (d.lastUpdatedAt = at))],
    ['POST', /^\/provisioned-model-throughput$/, (_, r) => createProvisionedThroughput(jsonBody(r.body))],
    ['GET', /^\/provisioned-model-throughput\/([^/]+)$/, (id) => ready(findProvisioned(id), 'InService', (p, now) => (p.lastModifiedTime = now))],
  ];

  function controlRoute(request: AwsJsonRequest): FakeReply | undefined {
    const path = `/${request.segments.join('/')}`;
    for (const [method, pattern, handler] of controlRoutes) {
      const match = request.method === method ? pattern.exec(path) : null;
      if (match) return handler(match[1] === undefined ? '' : pathSegment(match[1]), request);
    }
    return undefined;
  }

  const control = await startAwsJsonServer({ region, credentials, service: 'bedrock', route: controlRoute });
  const runtime = await startAwsJsonServer({
    region,
    credentials,
    service: 'bedrock',
    // The SDK's runtime client speaks HTTP/2 by default; fetch-based callers use HTTP/1.1.
    http2: true,
    route: runtimeRoute({
      checkInvocable,
      streamDelayMs: opts.streamDelayMs ?? 0,
      onCall: (call) => state.converseCalls.push(call),
      onStreamAbandoned: () => state.abandonedStreams++,
    }),
  });
  /** SigV4 checks per server: how many requests were verified, and each rejection. */
  const sigv4 = { s3: s3.state.sigv4, control: control.sigv4, runtime: runtime.sigv4 };

  const plane = (server: typeof control) => ({ url: server.origin, requests: server.requests, failNext: server.failNext, delayNext: server.delayNext });

  return {
    region,
    accountId,
    /** The credentials the fake accepts (sign with these). */
    credentials: credentials[0],
    /** The fake S3: `url` for `S3Client({endpoint, forcePathStyle: true})`, `putObject`/`getObject`/`createBucket`, its own `state`. */
    s3,
    /** The control plane: `url` for `BedrockClient({endpoint})`, plus `requests`, `failNext`, `delayNext`. */
    control: plane(control),
    /** The runtime: `url` for `BedrockRuntimeClient({endpoint})`, plus `requests`, `failNext` (e.g. 429 ThrottlingException), `delayNext`. */
    runtime: plane(runtime),
    state: Object.assign(state, { sigv4, invocationJobs: invocationJobs.jobs }),
    /** Batch inference: `advance(jobArnOrId, steps)` without a GET, `timeOut(jobArnOrId)` (Expired or PartiallyCompleted). */
    batch: { advance: invocationJobs.advance, timeOut: invocationJobs.timeOut, refuseRecords: invocationJobs.refuseRecords },
    /** Advances a job (by ARN or name) `steps` lifecycle steps without a GET; returns it. */
    advance(jobIdentifier: string, steps = 1): FakeCustomizationJob {
      const job = findJob(jobIdentifier);
      for (let i = 0; i < steps; i++) advanceJob(job);
      return job;
    },
    /** The job (by ARN or name) fails at its next step with `failureMessage`. */
    failJob(jobIdentifier: string, failureMessage = 'Internal error: the training run failed. Retry the job.'): void {
      findJob(jobIdentifier).pendingFailure = failureMessage;
    },
    /** An Active deployment of `modelArn` (registered as a custom model if unknown), ready for Converse; returns its ARN. */
    registerDeployment(modelArn: string, name = `deployment-${shortId()}`): string {
      if (!CUSTOM_MODEL_ARN.test(modelArn)) throw new Error(`Not a custom model ARN: ${modelArn}`);
      if (!state.customModels.has(modelArn)) {
        const baseModelId = modelArn.split('/')[1];
        state.customModels.set(modelArn, { modelArn, modelName: name, baseModelId });
      }
      return addDeployment(modelArn, name, 'Active').customModelDeploymentArn;
    },
    async close(): Promise<void> {
      await Promise.all([s3.close(), control.close(), runtime.close()]);
    },
  };
}

export type FakeBedrock = Awaited<ReturnType<typeof startFakeBedrock>>;

/**
 * CreateModelCustomizationJob. A hosted job's gateway id is its `clientRequestToken` (a repeated
 * submission gets the same job back) and names it (`gateway-<id>`, which findJob looks up); a
 * client-mode job gets a fresh name. The custom model is named after `suffix`; the output goes to
 * `provider_options.output_file` or beside the training data. Bedrock jobs have no seed and no
 * metadata: a hosted job keeps both in the gateway, a client-mode request that sends them is refused.
 */
import { randomUUID } from 'node:crypto';
import { CreateModelCustomizationJobCommand, type CreateModelCustomizationJobCommandInput } from '@aws-sdk/client-bedrock';
import { GatewayError, invalidField } from '../../errors';
import { readJobOptions } from '../job-input';
import type { CreateJobInput, ProviderJob } from '../types';
import type { BedrockConnection } from './connection';
import { bedrockHyperparameters } from './hyperparameters';
import { bedrockJobOptions, type BedrockJobOptions } from './job-options';
import { accountOf, toHyperparameters } from './mappers';
import { bedrockS3Uri, folderOf } from './s3-uri';
import { ROLE_ARN_PATTERN } from './settings';

const JOB_NAME = /^[a-zA-Z0-9](-*[a-zA-Z0-9+\-.])*$/;
const CUSTOM_MODEL_NAME = /^([0-9a-zA-Z][_-]?){1,63}$/;
const MAX_NAME_LENGTH = 63;

/** The name of a hosted job's Bedrock job: findable from the gateway id alone. */
export const hostedJobName = (gatewayJobId: string) => `gateway-${gatewayJobId}`;

function jobName(input: CreateJobInput, options: BedrockJobOptions): string {
  const chosen = options.jobName;
  if (chosen === undefined) return hostedJobName(input.gatewayJobId ?? randomUUID());
  if (chosen.length <= MAX_NAME_LENGTH && JOB_NAME.test(chosen)) return chosen;
  throw invalidField(['providerOptions', 'jobName'], 'must be at most 63 letters, digits and "-", "+", "." starting with a letter or digit');
}

function customModelName(input: CreateJobInput, name: string): string {
  if (input.suffix === undefined) return CUSTOM_MODEL_NAME.test(name) ? name : `gateway-${randomUUID()}`;
  if (input.suffix.length <= MAX_NAME_LENGTH && CUSTOM_MODEL_NAME.test(input.suffix)) return input.suffix;
  throw invalidField('suffix', 'must be letters and digits, with single "-" or "_" between them (it names the custom model on Amazon Bedrock)');
}

function roleArn(conn: BedrockConnection, options: BedrockJobOptions): string {
  const given = options.roleArn;
  if (given !== undefined && !ROLE_ARN_PATTERN.test(given))
    throw invalidField(['providerOptions', 'roleArn'], 'must be an IAM role ARN (arn:aws:iam::<account>:role/<name>)');
  const role = given ?? conn.roleArn;
  if (role) return role;
  throw new GatewayError('invalid_request', 'is required to create a job (or provider_options.role_arn): the IAM role Amazon Bedrock uses to read the data', {
    param: 'x-gateway-aws-role-arn',
    aboutField: true,
    code: 'missing_setting',
  });
}

function customizationType(options: BedrockJobOptions): 'FINE_TUNING' {
  const type = options.trainingType;
  if (type === undefined || /^fine[_-]?tuning$/i.test(type)) return 'FINE_TUNING';
  throw invalidField(['providerOptions', 'trainingType'], 'must be FINE_TUNING: the gateway converts chat datasets for fine-tuning only');
}

/** Client mode forwards everything or refuses: Bedrock has nowhere to put these. */
function refuseUnsupported(input: CreateJobInput): void {
  if (input.gatewayJobId !== undefined) return;
  if (input.seed !== undefined) throw invalidField('seed', 'is not supported by Amazon Bedrock');
  if (input.metadata !== undefined) throw invalidField('metadata', 'is not supported by Amazon Bedrock');
}

/** The job's output prefix: the caller's, or `bedrock-output/` beside the training data. */
function outputUri(options: BedrockJobOptions, trainingUri: string): string {
  if (options.outputFile !== undefined) return bedrockS3Uri(options.outputFile, ['providerOptions', 'outputFile']);
  const [, bucket, key] = /^s3:\/\/([^/]+)\/?(.*)$/.exec(trainingUri) ?? [];
  return `s3://${bucket}/${folderOf(key ?? '')}bedrock-output/`;
}

export function createJobRequest(conn: BedrockConnection, input: CreateJobInput): CreateModelCustomizationJobCommandInput {
  refuseUnsupported(input);
  const options = readJobOptions(bedrockJobOptions, input);
  const name = jobName(input, options);
  const trainingUri = bedrockS3Uri(input.trainingFile, 'trainingFile');
  const validation = input.validationFile === undefined ? undefined : bedrockS3Uri(input.validationFile, 'validationFile');
  return {
    jobName: name,
    customModelName: customModelName(input, name),
    roleArn: roleArn(conn, options),
    baseModelIdentifier: input.model,
    customizationType: customizationType(options),
    trainingDataConfig: { s3Uri: trainingUri },
    ...(validation ? { validationDataConfig: { validators: [{ s3Uri: validation }] } } : {}),
    outputDataConfig: { s3Uri: outputUri(options, trainingUri) },
    hyperParameters: bedrockHyperparameters(input, options.learningRate),
    // Without one the SDK makes a token per call, still the same across its own retries.
    ...(input.gatewayJobId ? { clientRequestToken: input.gatewayJobId } : {}),
  };
}

/** Bedrock answers a create with the job ARN only: the rest is what was asked, until the first get. */
export async function createJob(conn: BedrockConnection, input: CreateJobInput): Promise<ProviderJob> {
  const request = createJobRequest(conn, input);
  const { jobArn } = await conn.call('Amazon Bedrock', () => conn.control().send(new CreateModelCustomizationJobCommand(request)));
  if (!jobArn) throw new GatewayError('provider', 'Amazon Bedrock created a job without saying its ARN', { status: 502 });
  const hyperparameters = toHyperparameters(request.hyperParameters);
  return {
    id: jobArn,
    status: 'validating_files',
    model: input.model,
    fineTunedModel: null,
    servingModel: null,
    trainedTokens: null,
    error: null,
    createdAt: Math.floor(Date.now() / 1000),
    finishedAt: null,
    estimatedFinish: null,
    hyperparameters,
    method: { type: 'supervised', hyperparameters },
    resultFiles: [],
    trainingFile: input.trainingFile,
    validationFile: request.validationDataConfig?.validators?.[0]?.s3Uri ?? null,
    seed: null,
    suffix: request.customModelName ?? null,
    metadata: null,
    organizationId: accountOf(jobArn),
  };
}

/** Amazon Bedrock's fine-tuning job options (`provider_options`); create-job.ts checks what depends on the model or the settings. */
import { z } from 'zod';

const text = z.string().min(1).max(2048);

export const bedrockJobOptions = z.object({
  roleArn: text.optional().describe('The IAM role Amazon Bedrock reads the data with, instead of the x-gateway-aws-role-arn setting.'),
  jobName: text.optional().describe('The Bedrock job name: at most 63 letters, digits and "-", "+", "." (default: gateway-<job id>).'),
  outputFile: text.optional().describe('The s3:// prefix the job writes its output to (default: bedrock-output/ beside the training data).'),
  trainingType: text.optional().describe('FINE_TUNING, the only customization the gateway converts datasets for.'),
  learningRate: z
    .number()
    .positive()
    .max(1)
    .optional()
    .describe('An absolute learning rate, for the models without a multiplier (Nova, Titan, Llama); Claude models take learning_rate_multiplier.'),
});

export type BedrockJobOptions = z.output<typeof bedrockJobOptions>;

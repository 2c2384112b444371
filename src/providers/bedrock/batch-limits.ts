/** Bedrock's batch limits, known without loading the AWS SDK (client mode checks a file against them before any call). */

/** The fewest records Bedrock takes in a job (a per-model quota; 100 for the models it documents). */
export const MIN_RECORDS = 100;

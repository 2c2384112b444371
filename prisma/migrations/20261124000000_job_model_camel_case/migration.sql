-- Jobs keep a seed from creation on: OpenAI generates one when none is given, and so does the gateway now.
UPDATE "fine_tuning_jobs" SET "seed" = floor(random() * 2147483647)::integer WHERE "seed" IS NULL;
ALTER TABLE "fine_tuning_jobs" ALTER COLUMN "seed" SET NOT NULL;

-- JSON columns hold the gateway's own (camelCase) model, not OpenAI's wire spelling:
-- hyperparameters {nEpochs, batchSize, learningRateMultiplier, beta}, method {type, hyperparameters},
-- provider_options {roleArn, jobName, outputFile, trainingType}.
UPDATE "fine_tuning_jobs" SET "hyperparameters" = (
  SELECT coalesce(jsonb_object_agg(CASE key
      WHEN 'n_epochs' THEN 'nEpochs'
      WHEN 'batch_size' THEN 'batchSize'
      WHEN 'learning_rate_multiplier' THEN 'learningRateMultiplier'
      ELSE key END, value), '{}'::jsonb)
  FROM jsonb_each("hyperparameters"));

UPDATE "fine_tuning_jobs" SET "method" = jsonb_build_object('type', coalesce("method"->>'type', 'supervised'), 'hyperparameters', "hyperparameters");

UPDATE "fine_tuning_jobs" SET "provider_options" = (
  SELECT coalesce(jsonb_object_agg(CASE key
      WHEN 'role_arn' THEN 'roleArn'
      WHEN 'job_name' THEN 'jobName'
      WHEN 'output_file' THEN 'outputFile'
      WHEN 'training_type' THEN 'trainingType'
      ELSE key END, value), '{}'::jsonb)
  FROM jsonb_each("provider_options"));

-- What chat completions call for a job's result when it is not the fine-tuned model's name (Vertex AI endpoints).
ALTER TABLE "fine_tuning_jobs" ADD COLUMN "serving_model" TEXT;

-- CreateTable
CREATE TABLE "fine_tuning_jobs" (
    "id" UUID NOT NULL,
    "organisation_id" UUID NOT NULL,
    "workspace_id" UUID NOT NULL,
    "status" TEXT NOT NULL DEFAULT 'validating_files',
    "model" TEXT NOT NULL,
    "provider_model" TEXT,
    "provider" TEXT NOT NULL,
    "integration_slug" TEXT NOT NULL,
    "training_file_id" UUID NOT NULL,
    "validation_file_id" UUID,
    "suffix" TEXT,
    "seed" INTEGER,
    "method" JSONB,
    "hyperparameters" JSONB NOT NULL DEFAULT '{}',
    "legacy_hyperparameters" BOOLEAN NOT NULL DEFAULT false,
    "metadata" JSONB,
    "gateway_options" JSONB NOT NULL DEFAULT '{}',
    "provider_options" JSONB NOT NULL DEFAULT '{}',
    "provider_training_file_id" TEXT,
    "provider_validation_file_id" TEXT,
    "provider_job_id" TEXT,
    "submit_attempts" INTEGER NOT NULL DEFAULT 0,
    "fine_tuned_model" TEXT,
    "trained_tokens" BIGINT,
    "error" JSONB,
    "result_files" JSONB NOT NULL DEFAULT '[]',
    "estimated_finish" TIMESTAMPTZ(3),
    "finished_at" TIMESTAMPTZ(3),
    "provider_cancel_pending" BOOLEAN NOT NULL DEFAULT false,
    "next_poll_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "idle_polls" INTEGER NOT NULL DEFAULT 0,
    "failed_attempts" INTEGER NOT NULL DEFAULT 0,
    "lease_owner" TEXT,
    "lease_expires_at" TIMESTAMPTZ(3),
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "fine_tuning_jobs_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "fine_tuning_job_events" (
    "id" UUID NOT NULL,
    "organisation_id" UUID NOT NULL,
    "workspace_id" UUID NOT NULL,
    "job_id" UUID NOT NULL,
    "provider_event_id" TEXT,
    "seq" BIGSERIAL NOT NULL,
    "level" TEXT NOT NULL,
    "message" TEXT NOT NULL,
    "type" TEXT,
    "data" JSONB,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "fine_tuning_job_events_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "fine_tuning_job_checkpoints" (
    "id" UUID NOT NULL,
    "organisation_id" UUID NOT NULL,
    "workspace_id" UUID NOT NULL,
    "job_id" UUID NOT NULL,
    "provider_checkpoint_id" TEXT NOT NULL,
    "seq" BIGSERIAL NOT NULL,
    "fine_tuned_model_checkpoint" TEXT NOT NULL,
    "step_number" INTEGER NOT NULL,
    "metrics" JSONB NOT NULL DEFAULT '{}',
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "fine_tuning_job_checkpoints_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "fine_tuning_jobs_organisation_id_workspace_id_created_at_id_idx" ON "fine_tuning_jobs"("organisation_id", "workspace_id", "created_at", "id");

-- CreateIndex
CREATE INDEX "fine_tuning_jobs_status_next_poll_at_idx" ON "fine_tuning_jobs"("status", "next_poll_at");

-- CreateIndex
CREATE INDEX "fine_tuning_job_events_organisation_id_workspace_id_job_id__idx" ON "fine_tuning_job_events"("organisation_id", "workspace_id", "job_id", "seq");

-- CreateIndex
CREATE UNIQUE INDEX "fine_tuning_job_events_job_id_provider_event_id_key" ON "fine_tuning_job_events"("job_id", "provider_event_id");

-- CreateIndex
CREATE INDEX "fine_tuning_job_checkpoints_organisation_id_workspace_id_jo_idx" ON "fine_tuning_job_checkpoints"("organisation_id", "workspace_id", "job_id", "seq");

-- CreateIndex
CREATE UNIQUE INDEX "fine_tuning_job_checkpoints_job_id_provider_checkpoint_id_key" ON "fine_tuning_job_checkpoints"("job_id", "provider_checkpoint_id");

-- AddForeignKey
ALTER TABLE "fine_tuning_jobs" ADD CONSTRAINT "fine_tuning_jobs_workspace_id_fkey" FOREIGN KEY ("workspace_id") REFERENCES "workspaces"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "fine_tuning_job_events" ADD CONSTRAINT "fine_tuning_job_events_job_id_fkey" FOREIGN KEY ("job_id") REFERENCES "fine_tuning_jobs"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "fine_tuning_job_checkpoints" ADD CONSTRAINT "fine_tuning_job_checkpoints_job_id_fkey" FOREIGN KEY ("job_id") REFERENCES "fine_tuning_jobs"("id") ON DELETE CASCADE ON UPDATE CASCADE;

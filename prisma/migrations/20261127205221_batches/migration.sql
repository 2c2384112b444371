-- CreateTable
CREATE TABLE "batches" (
    "id" UUID NOT NULL,
    "organisation_id" UUID NOT NULL,
    "workspace_id" UUID NOT NULL,
    "status" TEXT NOT NULL DEFAULT 'validating',
    "endpoint" TEXT NOT NULL,
    "completion_window" TEXT NOT NULL,
    "input_file_id" UUID NOT NULL,
    "output_file_id" UUID,
    "error_file_id" UUID,
    "model" TEXT NOT NULL,
    "runner" TEXT NOT NULL,
    "provider" TEXT NOT NULL,
    "integration_slug" TEXT NOT NULL,
    "gateway_options" JSONB NOT NULL DEFAULT '{}',
    "metadata" JSONB,
    "errors" JSONB,
    "request_total" INTEGER NOT NULL DEFAULT 0,
    "request_completed" INTEGER NOT NULL DEFAULT 0,
    "request_failed" INTEGER NOT NULL DEFAULT 0,
    "input_tokens" BIGINT NOT NULL DEFAULT 0,
    "output_tokens" BIGINT NOT NULL DEFAULT 0,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "in_progress_at" TIMESTAMPTZ(3),
    "expires_at" TIMESTAMPTZ(3) NOT NULL,
    "finalizing_at" TIMESTAMPTZ(3),
    "completed_at" TIMESTAMPTZ(3),
    "failed_at" TIMESTAMPTZ(3),
    "expired_at" TIMESTAMPTZ(3),
    "cancelling_at" TIMESTAMPTZ(3),
    "cancelled_at" TIMESTAMPTZ(3),
    "next_run_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "lease_owner" TEXT,
    "lease_expires_at" TIMESTAMPTZ(3),
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "batches_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "batch_lines" (
    "batch_id" UUID NOT NULL,
    "line" INTEGER NOT NULL,
    "organisation_id" UUID NOT NULL,
    "workspace_id" UUID NOT NULL,
    "custom_id" TEXT NOT NULL,
    "body" JSONB NOT NULL,
    "state" TEXT NOT NULL DEFAULT 'pending',
    "owner" TEXT,
    "result" JSONB,

    CONSTRAINT "batch_lines_pkey" PRIMARY KEY ("batch_id","line")
);

-- CreateTable
CREATE TABLE "batch_events" (
    "id" UUID NOT NULL,
    "organisation_id" UUID NOT NULL,
    "workspace_id" UUID NOT NULL,
    "batch_id" UUID NOT NULL,
    "seq" BIGSERIAL NOT NULL,
    "level" TEXT NOT NULL,
    "message" TEXT NOT NULL,
    "data" JSONB,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "batch_events_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "batches_organisation_id_workspace_id_created_at_id_idx" ON "batches"("organisation_id", "workspace_id", "created_at", "id");

-- CreateIndex
CREATE INDEX "batches_status_next_run_at_idx" ON "batches"("status", "next_run_at");

-- CreateIndex
CREATE INDEX "batch_lines_batch_id_state_line_idx" ON "batch_lines"("batch_id", "state", "line");

-- CreateIndex
CREATE INDEX "batch_events_organisation_id_workspace_id_batch_id_seq_idx" ON "batch_events"("organisation_id", "workspace_id", "batch_id", "seq");

-- AddForeignKey
ALTER TABLE "batches" ADD CONSTRAINT "batches_workspace_id_fkey" FOREIGN KEY ("workspace_id") REFERENCES "workspaces"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "batch_lines" ADD CONSTRAINT "batch_lines_batch_id_fkey" FOREIGN KEY ("batch_id") REFERENCES "batches"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "batch_events" ADD CONSTRAINT "batch_events_batch_id_fkey" FOREIGN KEY ("batch_id") REFERENCES "batches"("id") ON DELETE CASCADE ON UPDATE CASCADE;

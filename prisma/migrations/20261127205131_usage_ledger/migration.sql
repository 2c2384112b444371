-- CreateTable
CREATE TABLE "usage_records" (
    "id" BIGSERIAL NOT NULL,
    "time" TIMESTAMPTZ(3) NOT NULL,
    "organisation_id" UUID NOT NULL,
    "workspace_id" UUID,
    "api_key_id" UUID,
    "operation" TEXT NOT NULL,
    "provider" TEXT NOT NULL,
    "integration" TEXT,
    "model" TEXT NOT NULL,
    "base_model" TEXT,
    "input_tokens" INTEGER NOT NULL DEFAULT 0,
    "cached_tokens" INTEGER NOT NULL DEFAULT 0,
    "output_tokens" INTEGER NOT NULL DEFAULT 0,
    "latency_ms" INTEGER,
    "ttft_ms" INTEGER,
    "status" INTEGER NOT NULL,
    "mode" TEXT NOT NULL,
    "streamed" BOOLEAN NOT NULL DEFAULT false,
    "batch" BOOLEAN NOT NULL DEFAULT false,
    "request_id" TEXT,

    CONSTRAINT "usage_records_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "usage_records_time_idx" ON "usage_records"("time");

-- CreateIndex
CREATE INDEX "usage_records_organisation_id_time_idx" ON "usage_records"("organisation_id", "time");

-- CreateIndex
CREATE INDEX "usage_records_workspace_id_time_idx" ON "usage_records"("workspace_id", "time");

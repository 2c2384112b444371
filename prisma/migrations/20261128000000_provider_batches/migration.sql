-- AlterTable
ALTER TABLE "batches" ADD COLUMN     "provider_batch_id" TEXT,
ADD COLUMN     "provider_input_file" TEXT,
ADD COLUMN     "submit_attempts" INTEGER NOT NULL DEFAULT 0;

-- CreateIndex
CREATE INDEX "batch_lines_batch_id_custom_id_idx" ON "batch_lines"("batch_id", "custom_id");

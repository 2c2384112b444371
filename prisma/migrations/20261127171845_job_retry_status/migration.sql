-- AlterTable
ALTER TABLE "fine_tuning_jobs" ADD COLUMN     "give_up_at" TIMESTAMPTZ(3),
ADD COLUMN     "retry_error" JSONB;

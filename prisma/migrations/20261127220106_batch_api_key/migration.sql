-- AlterTable
ALTER TABLE "batches" ADD COLUMN     "api_key_id" UUID;

-- CreateTable
CREATE TABLE "collections" (
    "id" UUID NOT NULL,
    "organisation_id" UUID NOT NULL,
    "workspace_id" UUID NOT NULL,
    "name" TEXT NOT NULL,
    "slug" TEXT NOT NULL,
    "is_default" BOOLEAN NOT NULL DEFAULT false,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "last_updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "collections_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "prompt_partials" (
    "id" UUID NOT NULL,
    "organisation_id" UUID NOT NULL,
    "workspace_id" UUID NOT NULL,
    "collection_id" UUID NOT NULL,
    "slug" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "status" TEXT NOT NULL DEFAULT 'active',
    "default_version_id" UUID,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "last_updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "prompt_partials_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "prompt_partial_versions" (
    "id" UUID NOT NULL,
    "organisation_id" UUID NOT NULL,
    "workspace_id" UUID NOT NULL,
    "partial_id" UUID NOT NULL,
    "version" INTEGER NOT NULL,
    "string" TEXT NOT NULL,
    "description" TEXT NOT NULL DEFAULT '',
    "status" TEXT NOT NULL DEFAULT 'active',
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "prompt_partial_versions_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "collections_organisation_id_workspace_id_idx" ON "collections"("organisation_id", "workspace_id");

-- CreateIndex
CREATE UNIQUE INDEX "collections_workspace_id_slug_key" ON "collections"("workspace_id", "slug");

-- CreateIndex
CREATE UNIQUE INDEX "prompt_partials_default_version_id_key" ON "prompt_partials"("default_version_id");

-- CreateIndex
CREATE INDEX "prompt_partials_organisation_id_workspace_id_collection_id_idx" ON "prompt_partials"("organisation_id", "workspace_id", "collection_id");

-- CreateIndex
CREATE UNIQUE INDEX "prompt_partials_workspace_id_slug_key" ON "prompt_partials"("workspace_id", "slug");

-- CreateIndex
CREATE UNIQUE INDEX "prompt_partial_versions_partial_id_version_key" ON "prompt_partial_versions"("partial_id", "version");

-- AddForeignKey
ALTER TABLE "collections" ADD CONSTRAINT "collections_workspace_id_fkey" FOREIGN KEY ("workspace_id") REFERENCES "workspaces"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "prompt_partials" ADD CONSTRAINT "prompt_partials_collection_id_fkey" FOREIGN KEY ("collection_id") REFERENCES "collections"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "prompt_partials" ADD CONSTRAINT "prompt_partials_default_version_id_fkey" FOREIGN KEY ("default_version_id") REFERENCES "prompt_partial_versions"("id") ON DELETE SET NULL ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "prompt_partial_versions" ADD CONSTRAINT "prompt_partial_versions_partial_id_fkey" FOREIGN KEY ("partial_id") REFERENCES "prompt_partials"("id") ON DELETE CASCADE ON UPDATE CASCADE;

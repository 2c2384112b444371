import { defineConfig } from 'prisma/config';

// Used by the Prisma CLI (`prisma generate`). Migrations are applied by the service itself
// (src/db/migrate.ts) because the CLI's native schema engine cannot be downloaded offline.
export default defineConfig({
  schema: 'prisma/schema.prisma',
  migrations: { path: 'prisma/migrations' },
  datasource: { url: process.env.DATABASE_URL ?? 'postgresql://localhost:5432/unused' },
});

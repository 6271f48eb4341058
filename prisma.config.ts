import { defineConfig } from 'prisma/config';

// Prisma CLI settings. Only `prisma generate` and `prisma validate`/`format` are used from the CLI:
// migrations are applied by our own runner (src/infra/prisma/migrator.ts) and created by scripts/db.ts,
// because the native schema engine cannot be downloaded on our build machines.
export default defineConfig({
  schema: 'prisma/schema.prisma',
  migrations: { path: 'prisma/migrations' },
  datasource: {
    url: process.env.DATABASE_URL ?? 'postgresql://localhost:5432/placeholder',
  },
});

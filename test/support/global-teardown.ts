import { rmSync } from 'node:fs';

export default async function globalTeardown(): Promise<void> {
  await globalThis.__TEST_DATABASE_DROP__?.();
  await globalThis.__TEST_EMBEDDED_PG__?.stop();
  await globalThis.__TEST_REDIS_STOP__?.();
  if (globalThis.__TEST_WEB_CLIENT_DIR__)
    rmSync(globalThis.__TEST_WEB_CLIENT_DIR__, {
      recursive: true,
      force: true,
    });
  if (globalThis.__TEST_SHARED_STORAGE_DIR__)
    rmSync(globalThis.__TEST_SHARED_STORAGE_DIR__, {
      recursive: true,
      force: true,
    });
}

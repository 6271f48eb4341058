export default async function globalTeardown(): Promise<void> {
  await globalThis.__TEST_DATABASE_DROP__?.();
  await globalThis.__TEST_EMBEDDED_PG__?.stop();
}

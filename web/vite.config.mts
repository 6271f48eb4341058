import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

const root = fileURLToPath(new URL('.', import.meta.url));

/**
 * The reference web client: built into web/dist, which the service serves at / (same origin as the API,
 * so the session cookie and the CSRF rules work as in production). `npm run dev:web` serves it with hot
 * reload on :5173 and forwards /v1 to the service on :3000.
 */
export default defineConfig({
  root,
  base: '/',
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    sourcemap: true,
    target: 'es2022',
    rolldownOptions: {
      // TanStack Query marks its modules "use client" (for React Server Components): nothing to keep in a
      // client-only bundle, so the warning about dropping it is only noise.
      onwarn(warning, warn) {
        if (warning.code !== 'MODULE_LEVEL_DIRECTIVE') warn(warning);
      },
    },
  },
  oxc: { jsx: { runtime: 'automatic' } },
  server: { port: 5173, proxy: { '/v1': 'http://localhost:3000' } },
});

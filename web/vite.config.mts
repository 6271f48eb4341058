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
  },
  oxc: { jsx: { runtime: 'automatic' } },
  server: { port: 5173, proxy: { '/v1': 'http://localhost:3000' } },
});

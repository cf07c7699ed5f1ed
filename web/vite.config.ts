import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

const api = process.env.API_URL ?? 'http://127.0.0.1:3000';

// The dashboard is served by the service at /app/ (src/dashboard/dashboard.ts reads web/dist).
export default defineConfig({
  root: fileURLToPath(new URL('.', import.meta.url)),
  base: '/app/',
  // Preact's JSX through Vite's own transformer: no Babel, no plugin.
  oxc: { jsx: { runtime: 'automatic', importSource: 'preact' } },
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    target: 'es2022',
    // No data: URLs, so the page's content security policy can stay strict.
    assetsInlineLimit: 0,
  },
  // `npm run dev:web` next to a running service: the API on the same origin, as in production.
  server: { proxy: { '/auth': api, '/v1': api, '/health': api } },
});

import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

const here = fileURLToPath(new URL('.', import.meta.url));

/**
 * The console is served by the service at /console (src/console/), from dist/console-app, on
 * the service's own origin only: no CDN, no inline script or style (the page's CSP allows
 * 'self' alone). Preact's automatic JSX runtime needs no plugin: the transformer is told
 * where the runtime comes from.
 */
export default defineConfig({
  root: here,
  base: '/console/',
  publicDir: false,
  oxc: { jsx: { runtime: 'automatic', importSource: 'preact' } },
  build: {
    outDir: `${here}../dist/console-app`,
    emptyOutDir: true,
    target: 'es2022',
    // An inlined asset would be a data: URL, which the CSP refuses.
    assetsInlineLimit: 0,
    modulePreload: { polyfill: false },
    reportCompressedSize: true,
  },
});

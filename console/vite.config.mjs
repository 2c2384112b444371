// The console's build: two pages (the console and the GraphQL explorer) served by the gateway at /console.
// Everything is bundled: the page loads nothing from another origin.
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

const dir = path.dirname(fileURLToPath(import.meta.url));
const here = (file) => path.resolve(dir, file);

export default defineConfig({
  root: here('.'),
  base: '/console/',
  publicDir: false,
  esbuild: { jsx: 'automatic', jsxImportSource: 'preact' },
  // The explorer imports the gateway's schema file from the project root.
  server: { fs: { allow: [here('..')] } },
  build: {
    outDir: here('dist'),
    emptyOutDir: true,
    target: 'es2022',
    reportCompressedSize: false,
    chunkSizeWarningLimit: 2048,
    rollupOptions: { input: { main: here('index.html'), explorer: here('explorer.html') } },
  },
});

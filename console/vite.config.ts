import { defineConfig } from 'vite';

// console/tsconfig.json has the browser's types, not Node's: the one environment variable read here is reached untyped.
const env = (globalThis as { process?: { env: Record<string, string | undefined> } }).process?.env ?? {};
// Where `npx vite console` forwards the API: a gateway started by `npm run dev` (PORT=… moves it).
const gateway = env.GATEWAY_URL ?? 'http://127.0.0.1:8080';

// `vite build console` and `vite console` take this directory as the root, so relative paths start here.
export default defineConfig({
  base: '/console/',
  // Preact's automatic JSX runtime through Vite's own transform: no preset plugin (and its Babel) to install.
  oxc: { jsx: { runtime: 'automatic', importSource: 'preact' } },
  build: {
    outDir: '../dist/console',
    emptyOutDir: true,
    // Chromium, Firefox and Safari of the last two years run the console; nothing older is worth polyfilling for an admin tool.
    target: 'es2022',
    // One entry chunk and no dynamic imports: the modulepreload polyfill would be dead weight.
    modulePreload: { polyfill: false },
  },
  server: {
    // For working on the pages: `npx vite console` serves the sources with hot reload and forwards the API.
    proxy: { '/v1': gateway, '/internal': gateway },
  },
});

/// <reference types="vitest/config" />
import { fileURLToPath } from 'node:url';
import { defineConfig, type Plugin } from 'vite';
import react from '@vitejs/plugin-react';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { brotliCompressSync, constants, gzipSync } from 'node:zlib';

/** Writes name.br and name.gz beside every script and stylesheet: `cronplane serve` (api/spa.py)
 * sends them to a browser that accepts them, so compression costs nothing per request. */
function precompress(): Plugin {
  return {
    name: 'cronplane-precompress',
    apply: 'build',
    writeBundle(options, bundle) {
      const dir = options.dir ?? 'dist';
      for (const file of Object.keys(bundle)) {
        if (!/\.(js|css|svg|json)$/.test(file)) continue;
        const path = join(dir, file);
        const body = readFileSync(path);
        writeFileSync(`${path}.br`, brotliCompressSync(body, { params: { [constants.BROTLI_PARAM_QUALITY]: 11 } }));
        writeFileSync(`${path}.gz`, gzipSync(body, { level: 9 }));
      }
    },
  };
}

/** Fails the build when the scripts use a Mantine class (`m_` and 8 hex digits, on every
 * component's root and parts) that no emitted stylesheet defines: src/app/mantine.css imports
 * Mantine's styles per component, and a component added to the console needs its line there. */
function mantineStylesCovered(): Plugin {
  return {
    name: 'cronplane-mantine-styles-covered',
    apply: 'build',
    generateBundle(_options, bundle) {
      const used = new Set<string>();
      let css = '';
      for (const item of Object.values(bundle)) {
        if (item.type === 'chunk') for (const m of item.code.matchAll(/\bm_[0-9a-f]{8}\b/g)) used.add(m[0]);
        else if (item.fileName.endsWith('.css')) css += String(item.source);
      }
      // A name is a class (`.m_…`) or, for animations, a keyframes name (`@keyframes m_…`).
      const missing = [...used].filter((name) => !css.includes(`.${name}`) && !css.includes(`@keyframes ${name}`));
      if (missing.length) this.error(`Mantine classes without styles (add the component's stylesheet to src/app/mantine.css): ${missing.join(', ')}`);
    },
  };
}

const backend = process.env.CRONPLANE_BACKEND_URL ?? 'http://127.0.0.1:8080';

/**
 * `virtual:required-roles`: the role each API operation needs (operationId → its
 * `x-required-role`), read from openapi.json whenever the console is built or tested. The gates
 * use it, so a role rule lives only in the server's @requires decorator, and there is no
 * generated file to go stale when the API changes.
 */
function requiredRoles(): Plugin {
  const id = 'virtual:required-roles';
  const spec = fileURLToPath(new URL('./openapi.json', import.meta.url));
  return {
    name: 'cronplane-required-roles',
    resolveId: (source) => (source === id ? '\0' + id : undefined),
    load(resolved) {
      if (resolved !== '\0' + id) return undefined;
      this.addWatchFile(spec);
      const paths = JSON.parse(readFileSync(spec, 'utf8')).paths as Record<string, Record<string, { operationId?: string; 'x-required-role'?: string }>>;
      const roles: Record<string, string> = {};
      for (const [path, item] of Object.entries(paths)) {
        for (const [method, op] of Object.entries(item)) {
          if (!op.operationId) continue;
          const role = op['x-required-role'];
          if (!role) this.error(`${method.toUpperCase()} ${path} has no x-required-role in openapi.json`);
          roles[op.operationId] = role;
        }
      }
      return `export const REQUIRED_ROLE = ${JSON.stringify(roles)};`;
    },
  };
}

export default defineConfig({
  plugins: [react(), requiredRoles(), mantineStylesCovered(), precompress()],
  server: {
    proxy: {
      '/api': backend,
      '/healthz': backend,
      '/readyz': backend,
    },
  },
  build: {
    outDir: 'dist',
    // Recharts + Mantine make one large-ish chunk; splitting by route is not worth the extra requests here.
    chunkSizeWarningLimit: 1500,
  },
  test: {
    environment: 'jsdom',
    globals: true,
    setupFiles: ['./src/test/setup.ts'],
    css: false,
    pool: 'threads',
    // One environment and one import of Mantine/React per worker, not per file; src/test/setup.ts
    // puts back what a file could leave behind (globals, storage, cookies, URL, the app's modules).
    isolate: false,
    // Two-core CI machines: user-event typing in a Mantine form can pass 5 s under load.
    testTimeout: 15_000,
  },
});

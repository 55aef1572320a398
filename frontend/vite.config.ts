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

/**
 * Imports inside Mantine that cost the first paint. Two pulled whole libraries into the first
 * download although the importer uses one small piece: ScrollArea takes useMergeRefs from
 * @floating-ui/react (the positioning engine of menus, selects and tooltips, ~20 KB brotli), the
 * AppShell's header, footer and aside take RemoveScroll only for its class names
 * (react-remove-scroll and its helpers, ~5 KB). And @mantine/hooks' useId swaps React's id for a
 * random one in a layout effect: a state update in every first commit, which re-rendered the
 * shell and ran all the first render's effects before its paint; here it is React's id alone
 * (issue 45). Only those importers are redirected (src/app/vendor-shims/); the components that
 * really use the libraries still import them and load with their own lazy chunks. The build fails
 * if an expected importer stops being seen, so a Mantine upgrade that moves the imports is
 * noticed rather than silently undoing this (bench/RESULTS.md, issues 23 and 45).
 */
function lighterVendorImports(): Plugin {
  const shims = [
    { source: '@floating-ui/react', importer: /[\\/]ScrollArea[\\/]ScrollArea\.mjs$/, to: 'merge-refs.ts' },
    { source: 'react-remove-scroll', importer: /[\\/]AppShell[\\/]AppShell(Header|Footer|Aside)[\\/]AppShell\1\.mjs$/, to: 'remove-scroll.ts' },
    { source: './use-id/use-id.mjs', importer: /[\\/]@mantine[\\/]hooks[\\/]esm[\\/]index\.mjs$/, to: 'use-id.ts' },
  ];
  const seen = new Set<string>();
  return {
    name: 'cronplane-lighter-vendor-imports',
    apply: 'build',
    enforce: 'pre',
    resolveId(source, importer) {
      const shim = importer && shims.find((s) => s.source === source && s.importer.test(importer));
      if (!shim) return undefined;
      seen.add(shim.to);
      return fileURLToPath(new URL(`./src/app/vendor-shims/${shim.to}`, import.meta.url));
    },
    buildEnd(error) {
      const unseen = shims.filter((s) => !seen.has(s.to));
      if (!error && unseen.length) this.error(`lighterVendorImports: no import of ${unseen.map((s) => s.source).join(', ')} where expected; check src/app/vendor-shims/`);
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
      const paths = JSON.parse(readFileSync(spec, 'utf8')).paths as Record<string, Record<string, { operationId?: string; 'x-required-role'?: string; 'x-role-scope'?: string }>>;
      const roles: Record<string, string> = {};
      // `x-role-scope: instance`: the installation's operations, gated on the user's own role,
      // never on a role in a project (contract v3, two scopes).
      const instance: string[] = [];
      for (const [path, item] of Object.entries(paths)) {
        for (const [method, op] of Object.entries(item)) {
          if (!op.operationId) continue;
          const role = op['x-required-role'];
          if (!role) this.error(`${method.toUpperCase()} ${path} has no x-required-role in openapi.json`);
          roles[op.operationId] = role;
          if (op['x-role-scope'] === 'instance') instance.push(op.operationId);
        }
      }
      return `export const REQUIRED_ROLE = ${JSON.stringify(roles)};\nexport const INSTANCE_OPERATIONS = ${JSON.stringify(instance)};`;
    },
  };
}

export default defineConfig({
  plugins: [lighterVendorImports(), react(), requiredRoles(), mantineStylesCovered(), precompress()],
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
    rolldownOptions: {
      output: {
        // Everything the entry imports statically is one script: left alone, rolldown cut it into
        // 7 files by which lazy pages share what (react in one, react-query in another), all
        // needed before the first render anyway; one file is 7 KB smaller in brotli and 6 fewer
        // requests on a 6-connection, 562 ms-latency network (bench/RESULTS.md, issue 23).
        codeSplitting: { groups: [{ name: 'index', tags: ['$initial'] }] },
      },
    },
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
    // Two workers on two cores: Vitest's default (the cores less one) ran the 66 files on one
    // thread, 0.9 of a core busy for ~58 s on an idle box; two took 46 s where one took 95-149 s
    // at load 8-14 (bench/RESULTS.md, 2026-12-07). The files wait on user-event and timers too.
    maxWorkers: 2,
    // Two-core CI machines: user-event typing in a Mantine form can pass 5 s under load.
    testTimeout: 15_000,
  },
});

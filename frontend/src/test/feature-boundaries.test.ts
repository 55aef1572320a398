// @vitest-environment node
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative, resolve, sep } from 'node:path';
import { describe, expect, it } from 'vitest';

const SRC = resolve(__dirname, '..');
const FEATURES = join(SRC, 'features');

function files(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const p = join(dir, name);
    return statSync(p).isDirectory() ? files(p) : /\.(ts|tsx)$/.test(name) ? [p] : [];
  });
}

const IMPORT = /(?:import|export)\s[^'"]*?from\s+['"]([^'"]+)['"]|import\(\s*['"]([^'"]+)['"]\s*\)/g;

describe('feature boundaries', () => {
  it('features import only themselves and shared folders (api, components, lib), never another feature or app', () => {
    const offences: string[] = [];
    for (const file of files(FEATURES)) {
      const own = relative(FEATURES, file).split(sep)[0];
      for (const m of readFileSync(file, 'utf8').matchAll(IMPORT)) {
        const spec = m[1] ?? m[2] ?? '';
        if (!spec.startsWith('.')) continue;
        const target = relative(SRC, resolve(file, '..', spec)).split(sep);
        const crossFeature = target[0] === 'features' && target[1] !== own;
        if (crossFeature || target[0] === 'app') offences.push(`${relative(SRC, file)} imports ${spec}`);
      }
    }
    expect(offences, 'move shared code to src/components, src/lib or src/api; compose features in src/app').toEqual([]);
  });

  it('shared folders never import a feature or the app', () => {
    const offences = ['api', 'components', 'lib'].flatMap((dir) =>
      files(join(SRC, dir)).flatMap((file) =>
        [...readFileSync(file, 'utf8').matchAll(IMPORT)]
          .map((m) => m[1] ?? m[2] ?? '')
          .filter((spec) => spec.startsWith('.') && /^(features|app)/.test(relative(SRC, resolve(file, '..', spec))))
          .map((spec) => `${relative(SRC, file)} imports ${spec}`),
      ),
    );
    expect(offences).toEqual([]);
  });
});

import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { fieldDefault } from '../../../src/model/data.ts';
import type { Field } from '../../../src/model/fields.ts';
import { allTypes } from '../../../src/model/registry.ts';

/**
 * A default is declared once, in the type's field table (docs/architecture.md §3): code that reads a field falls back
 * to `fieldDefault(type, field)`, never to the value written again as `<Field> ?? <literal>`.
 */

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));

function* sourceFiles(dir: string): Generator<string> {
  for (const name of readdirSync(join(ROOT, dir))) {
    const path = join(dir, name);
    if (statSync(join(ROOT, path)).isDirectory()) yield* sourceFiles(path);
    else if (name.endsWith('.ts')) yield path;
  }
}

/** Every field with a literal default, nested records and list items included, as [field name, default]. */
function declaredDefaults(): Map<string, Set<string | number | boolean>> {
  const found = new Map<string, Set<string | number | boolean>>();
  const walk = (fields: readonly Field[]): void => {
    for (const f of fields) {
      const d = f.default;
      if (typeof d === 'string' || typeof d === 'number' || typeof d === 'boolean') {
        const values = found.get(f.name) ?? new Set();
        found.set(f.name, values.add(d));
      }
      const kind = f.kind.kind === 'list' ? f.kind.of : f.kind;
      if (kind.kind === 'record') walk(kind.fields);
    }
  };
  for (const type of allTypes()) walk(type.fields);
  return found;
}

const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
const literal = (v: string | number | boolean) =>
  typeof v === 'string' ? `(['"\`])${escapeRegExp(v)}\\1` : `${escapeRegExp(String(v))}(?![\\w.])`;

/** The places in `text` where a field is read and followed, in the same expression, by `?? <its default>`. */
export function restatedDefaults(text: string, defaults = declaredDefaults()): string[] {
  const hits: string[] = [];
  for (const [name, values] of defaults)
    for (const v of values) {
      const pattern = new RegExp(`\\b${escapeRegExp(name)}\\b[^;\\n]*?\\?\\?\\s*${literal(v)}`, 'g');
      for (const m of text.matchAll(pattern)) hits.push(m[0]);
    }
  return hits;
}

test('no source file restates a declared default as `<Field> ?? <literal>`', () => {
  const defaults = declaredDefaults();
  assert.ok(defaults.get('Priority')?.has(50), 'the registry declares Priority 50 (the check reads the registry)');
  const found: string[] = [];
  for (const file of sourceFiles('src'))
    for (const hit of restatedDefaults(readFileSync(join(ROOT, file), 'utf8'), defaults)) found.push(`${file}: ${hit}`);
  assert.deepEqual(found, [], 'read these defaults with fieldDefault(type, field) instead');
});

test('the check finds a restated default, and not the declared one read from the registry', () => {
  assert.deepEqual(restatedDefaults('priority: call.Priority ?? (d.Priority as number | null) ?? 50,').length, 1);
  assert.deepEqual(restatedDefaults('const zone = ps.data.AgentTimeout ?? 60;').length, 1);
  assert.deepEqual(restatedDefaults("status: r.StatusToRaiseOn ?? 'Completed',").length, 1);
  assert.deepEqual(restatedDefaults("priority: d.Priority ?? fieldDefault('JobDefinition', 'Priority'),"), []);
  assert.deepEqual(restatedDefaults('const n = d.Priority ?? 500;'), []);
});

test('fieldDefault reads the declaration, nested fields included', () => {
  assert.equal(fieldDefault('JobDefinition', 'Priority'), 50);
  assert.equal(fieldDefault('ProcessServer', 'AgentTimeout'), 60);
  assert.equal(fieldDefault('JobDefinition', 'RaiseEvents', 'StatusToRaiseOn'), 'Completed');
  assert.equal(fieldDefault('JobDefinition', 'UserMessage', 'Responses', 'Status'), 'Completed');
  assert.throws(() => fieldDefault('JobDefinition', 'Script'), /declares no default for Script/);
});

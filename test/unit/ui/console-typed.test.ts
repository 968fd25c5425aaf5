import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { test } from 'node:test';
import ts from 'typescript';

/**
 * The console's modules (src/ui/static/app) are type-checked (tsconfig.console.json, run by scripts/test.sh): every
 * one of them is in that check, and none opts out of it (docs/architecture.md §2, after the layout).
 */

const ROOT = new URL('../../../', import.meta.url).pathname;
const APP = join(ROOT, 'src/ui/static/app');

function scripts(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return scripts(path);
    return entry.name.endsWith('.js') ? [relative(ROOT, path)] : [];
  });
}

function checkedFiles(): string[] {
  const parsed = ts.getParsedCommandLineOfConfigFile(join(ROOT, 'tsconfig.console.json'), undefined, {
    ...ts.sys,
    onUnRecoverableConfigFileDiagnostic: (d) => assert.fail(ts.flattenDiagnosticMessageText(d.messageText, '\n')),
  });
  assert.ok(parsed, 'tsconfig.console.json is read');
  assert.equal(parsed.options.checkJs, true);
  assert.equal(parsed.options.strict, true);
  return parsed.fileNames.map((f) => relative(ROOT, f));
}

test('every module of the console is in its type check', () => {
  const modules = scripts(APP);
  assert.ok(modules.includes('src/ui/static/app/main.js'), 'the console is found');
  const checked = new Set(checkedFiles());
  assert.deepEqual(
    modules.filter((f) => !checked.has(f)),
    [],
  );
});

/** Where a JSDoc type of the module says `any` (its syntax tree, so prose that says "any" is no match). */
function anyTypes(file: string, text: string): string[] {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true, ts.ScriptKind.JS);
  const found: string[] = [];
  const visit = (node: ts.Node): void => {
    if (node.kind === ts.SyntaxKind.AnyKeyword)
      found.push(`${file}:${source.getLineAndCharacterOfPosition(node.getStart()).line + 1}: any`);
    // A node's JSDoc is not among its children; the JSDoc's own nodes are (and own no JSDoc of their own).
    if (!(node.flags & ts.NodeFlags.JSDoc))
      for (const doc of ts.getJSDocCommentsAndTags(node)) ts.forEachChild(doc, visit);
    ts.forEachChild(node, visit);
  };
  visit(source);
  return [...new Set(found)];
}

test('no console module opts out of the check or types something as any', () => {
  const found: string[] = [];
  for (const file of scripts(APP)) {
    const text = readFileSync(join(ROOT, file), 'utf8');
    text.split('\n').forEach((line, i) => {
      if (/@ts-(ignore|nocheck|expect-error)/.test(line)) found.push(`${file}:${i + 1}: ${line.trim()}`);
    });
    found.push(...anyTypes(file, text));
  }
  assert.deepEqual(found, []);
});

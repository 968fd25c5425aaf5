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

/**
 * The variables, parameters, calls and property reads of the console's modules that are typed `any`: in a checked
 * JavaScript file tsc gives `any` where it infers nothing (a generic's parameter that no argument or declared type
 * fixes, `new Map()`) and does not report it. Not counted: JSON.parse (the answer is typed where it is parsed,
 * api.js and feed.js), the target of an assignment (a DOM property written to) and an unused `_` parameter.
 */
function anyValues(): string[] {
  const config = ts.getParsedCommandLineOfConfigFile(join(ROOT, 'tsconfig.console.json'), undefined, {
    ...ts.sys,
    onUnRecoverableConfigFileDiagnostic: (d) => assert.fail(ts.flattenDiagnosticMessageText(d.messageText, '\n')),
  });
  assert.ok(config);
  const program = ts.createProgram(config.fileNames, config.options);
  const checker = program.getTypeChecker();
  const found: string[] = [];
  for (const source of program.getSourceFiles()) {
    if (!source.fileName.startsWith(`${APP}/`)) continue;
    const visit = (node: ts.Node): void => {
      const at = valueAt(node);
      if (at && checker.getTypeAtLocation(at).flags & ts.TypeFlags.Any) {
        const line = source.getLineAndCharacterOfPosition(at.getStart()).line + 1;
        found.push(`${relative(ROOT, source.fileName)}:${line}: ${at.getText()}`);
      }
      ts.forEachChild(node, visit);
    };
    visit(source);
  }
  return found;
}

/** The node whose type is looked at, if `node` is one the rule above counts. */
function valueAt(node: ts.Node): ts.Node | null {
  if (ts.isVariableDeclaration(node) || ts.isParameter(node) || ts.isBindingElement(node))
    return ts.isIdentifier(node.name) && !node.name.text.startsWith('_') ? node.name : null;
  if (ts.isCallExpression(node) && node.expression.getText() === 'JSON.parse') return null;
  if (ts.isCallExpression(node) || ts.isNewExpression(node)) return node;
  if (ts.isPropertyAccessExpression(node) || ts.isElementAccessExpression(node)) {
    const parent = node.parent;
    const written =
      ts.isBinaryExpression(parent) && parent.left === node && parent.operatorToken.kind === ts.SyntaxKind.EqualsToken;
    return written ? null : node;
  }
  return null;
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

test('no value of the console is typed any where tsc inferred nothing', () => {
  assert.deepEqual(anyValues(), []);
});

import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { Command } from 'commander';
import { registerServe } from '../../src/cli/serve.ts';

/** The repository stands alone — its architecture, its license, its settings documented. */

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const read = (path: string) => readFileSync(join(ROOT, path), 'utf8');

function* files(dir: string): Generator<string> {
  for (const name of readdirSync(join(ROOT, dir))) {
    const path = join(dir, name);
    if (statSync(join(ROOT, path)).isDirectory()) yield* files(path);
    else if (/\.(ts|mjs|md|sh)$/.test(name)) yield path;
  }
}
const sources = () => [...files('src'), ...files('test'), ...files('scripts'), ...files('bench'), 'README.md'];

test('serve --help names each option with its environment variable and default', () => {
  const program = new Command('millrace');
  registerServe(program);
  const serve = program.commands.find((c) => c.name() === 'serve') as Command;
  // A `--no-X` option only turns `--X` off: its twin names the variable and default.
  for (const option of serve.options.filter((o) => !o.negate)) {
    assert.match(
      option.description,
      /\(env MILLRACE_[A-Z_]+[,;] default/,
      `${option.long} names its variable and default`,
    );
  }
  const help = serve.helpInformation().replace(/\s+/g, ' ');
  for (const name of ['MILLRACE_LOG_LEVEL', 'MILLRACE_TIME_ZONE', 'MILLRACE_VENDOR_FOLDER'])
    assert.ok(help.includes(name), name);
});

test('every MILLRACE_* setting the server reads is documented in the README', () => {
  const readme = read('README.md');
  const config = read('src/config/config.ts') + read('src/main.ts') + read('src/cli/serve.ts');
  const names = new Set([...config.matchAll(/MILLRACE_[A-Z_]+/g)].map((m) => m[0]));
  for (const name of names) assert.ok(readme.includes(name), `${name} is in the README`);
});

test('LICENSE holds the Apache License 2.0 that package.json names', () => {
  assert.equal(JSON.parse(read('package.json')).license, 'Apache-2.0');
  const license = read('LICENSE');
  assert.match(license, /Apache License\s+Version 2\.0, January 2004/);
  assert.match(license, /END OF TERMS AND CONDITIONS/);
});

test('references to the architecture point into the repository, at sections that exist', () => {
  const sections = (doc: string) => new Set([...read(doc).matchAll(/^## (\d+a?)\./gm)].map((m) => m[1]));
  const docs = { architecture: sections('docs/architecture.md'), interfaces: sections('docs/interfaces.md') };
  for (const file of [...sources(), 'docs/interfaces.md']) {
    if (file.endsWith('project-standalone.test.ts')) continue;
    const text = read(file);
    assert.doesNotMatch(text, /DESIGN(\.md)? ?§|shared\/DESIGN/, `${file} cites a file outside the repository`);
    for (const m of text.matchAll(/docs\/(architecture|interfaces)\.md`? §(\d+a?)/g))
      assert.ok(docs[m[1] as keyof typeof docs].has(m[2] as string), `${file}: docs/${m[1]}.md §${m[2]} exists`);
  }
});

/** What a citation of something a reader of the repository cannot open looks like, with what it means. */
const OUTSIDE_CITATIONS: Array<[RegExp, string]> = [
  [/\b[Ii]ssue[ -]\d+/, 'an issue number'],
  [/\b(?:spec|product)(?: document \d+)?(?:'s)? §/i, 'a section of an outside document'],
  [/\bspec (?:document|row)s? \d/i, 'an outside document'],
  [/perf-reliability|ecosystem(?:\.md)? §/, 'an outside document'],
  [/\b[Ss]tops? \d+\b/, 'the name of a work step'],
];

function* textFiles(dir: string): Generator<string> {
  for (const name of readdirSync(join(ROOT, dir))) {
    const path = join(dir, name);
    if (statSync(join(ROOT, path)).isDirectory()) yield* textFiles(path);
    else if (/\.(ts|mjs|cjs|js|md|sh|yml|html|css)$/.test(name)) yield path;
  }
}

test('no comment or document cites an issue, a work step or a document outside the repository', () => {
  const all = [...['src', 'test', 'scripts', 'bench', 'docs'].flatMap((d) => [...textFiles(d)]), 'README.md'];
  assert.ok(all.includes('docs/swagger.yml') && all.includes('src/http/json/plugin.ts'), 'the walk finds the files');
  const found: string[] = [];
  for (const file of all) {
    if (file.endsWith('project-standalone.test.ts')) continue;
    read(file)
      .split('\n')
      .forEach((line, i) => {
        for (const [pattern, what] of OUTSIDE_CITATIONS)
          if (pattern.test(line)) found.push(`${file}:${i + 1} cites ${what}: ${line.trim()}`);
        // Outside docs/, a § names its file: `docs/architecture.md §7, §12`. Any other is some other document's.
        const named = line
          .replace(/(?:architecture|interfaces)\.md`? §[\w.]+(?:(?:, |–| and | or )§?[\w.]+)*/g, '')
          .replace(/XML 1\.0 §[\d.]+/g, '');
        if (!file.startsWith('docs/') && named.includes('§'))
          found.push(`${file}:${i + 1} has a § of no file: ${line.trim()}`);
      });
  }
  assert.deepEqual(found, [], 'say the rule itself, or cite docs/architecture.md §N');
});

test('package-lock.json lists every platform package of the linter, so `npm ci` accepts it (.ci/run)', () => {
  const packages = JSON.parse(read('package-lock.json')).packages as Record<
    string,
    { optionalDependencies?: Record<string, string> }
  >;
  const biome = packages['node_modules/@biomejs/biome'];
  for (const name of Object.keys(biome?.optionalDependencies ?? {}))
    assert.ok(packages[`node_modules/${name}`], `${name} is in package-lock.json (node scripts/lock-platforms.mjs)`);
});

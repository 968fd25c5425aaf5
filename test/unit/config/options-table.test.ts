import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { OPTIONS } from '../../../src/config/options.ts';

const strip = (cell: string) => cell.trim().replace(/^`|`$/g, '');

test("the README's configuration table lists exactly the options of the code, with their flags, variables and defaults", () => {
  const readme = readFileSync(new URL('../../../README.md', import.meta.url), 'utf8');
  const section = readme.slice(readme.indexOf('## Configuration'));
  const rows = section
    .split('\n')
    .filter((l) => /^\| (serve|agent) \|/.test(l))
    .map((l) => l.split('|').slice(1, -1).map(strip));
  const documented = rows.map(([command, key, flag, env, dflt]) => ({ command, key, flag, env, dflt }));
  const code = OPTIONS.map((o) => ({
    command: o.command,
    key: o.key,
    flag: o.noFlag ? '–' : o.arg ? `--${o.key} ${o.arg}` : `--[no-]${o.key}`,
    env: o.env,
    dflt: strip(o.default),
  }));
  assert.deepEqual(documented, code);
});

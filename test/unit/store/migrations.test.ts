import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { migrationProvider, migrations } from '../../../src/store/migrations/index.ts';

/** The migrations' folder (docs/architecture.md §2): one file per migration, listed in order by its index. */

const FOLDER = fileURLToPath(new URL('../../../src/store/migrations/', import.meta.url));
const numbered = () =>
  readdirSync(FOLDER)
    .filter((name) => /^\d{4}_/.test(name))
    .sort();

/**
 * The names existing databases have recorded in `kysely_migration`, as released: a renamed or reordered migration
 * would run again on them, or never.
 */
const RECORDED = [
  '0001_objects_and_security',
  '0002_jobs',
  '0003_job_indexes',
  '0004_events',
  '0005_alert_work',
  '0006_blobs',
  '0007_job_history',
  '0008_job_list_indexes',
  '0009_chain_structures',
  '0010_cluster',
  '0011_job_definition_type',
  '0012_auth_failures',
  '0013_agent_instance',
];

test('the migration files are numbered from 0001 without a gap, each named NNNN_<what>.ts', () => {
  const files = numbered();
  assert.ok(files.length >= RECORDED.length);
  files.forEach((file, i) => {
    assert.match(file, /^\d{4}_[a-z0-9_]+\.ts$/);
    assert.equal(Number(file.slice(0, 4)), i + 1, `${file} is number ${i + 1}`);
  });
  const others = readdirSync(FOLDER).filter((name) => !/^\d{4}_/.test(name));
  assert.deepEqual(others.sort(), ['dialect.ts', 'index.ts']);
});

test('the index lists every migration file in its order, under its file name, with the up it exports', async () => {
  assert.deepEqual(
    migrations.map((m) => m.name),
    numbered().map((file) => file.replace(/\.ts$/, '')),
  );
  for (const [i, file] of numbered().entries()) {
    const module = (await import(new URL(file, `file://${FOLDER}`).href)) as { up: unknown };
    assert.equal(migrations[i]?.up, module.up, `${file}'s up`);
  }
});

test('the names recorded by released versions are unchanged, and new migrations only follow them', async () => {
  assert.deepEqual(
    migrations.slice(0, RECORDED.length).map((m) => m.name),
    RECORDED,
  );
  for (const dialect of ['sqlite', 'postgres'] as const) {
    const given = Object.keys(await migrationProvider(dialect).getMigrations());
    assert.deepEqual(
      given,
      migrations.map((m) => m.name),
      dialect,
    );
  }
});

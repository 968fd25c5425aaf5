import { readdirSync, statSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Command } from 'commander';
import { stringify } from 'yaml';
import type { ObjectType } from '../../model/object-type.ts';
import { requireType } from '../../model/registry.ts';
import { BUILTIN_OBJECTS } from '../../services/bootstrap.ts';
import { clientCommand, collect, contextOf, type ClientFlags, type Ctx } from './context.ts';
import { ApiError, type Json, seg } from './http.ts';
import {
  applyOrder,
  currentOf,
  defaultsOf,
  diff,
  exportDocument,
  type FieldChange,
  idOf,
  keyOfRendered,
  type Manifest,
  manifestOfServerObject,
  parseFile,
  provides,
  referencesOf,
} from './manifest.ts';
import { paint, printJson, useColour, write } from './output.ts';
import { errorMessage } from '../../errors.ts';

/**
 * `millrace apply` (objects in files → server, in dependency order) and `millrace def export` (server → files that
 * apply reads back to the same objects). The comparison and ordering live in manifest.ts; this file talks to the
 * server and prints.
 */

interface ApplyFlags extends ClientFlags {
  file: string[];
  dryRun?: boolean;
  prune?: boolean;
}

type Action = 'created' | 'changed' | 'unchanged' | 'deleted' | 'kept';

interface Outcome {
  action: Action;
  type: string;
  key: string;
  changes?: FieldChange[];
}

const BUILTIN = new Set(BUILTIN_OBJECTS.map((b) => idOf(b.type, b.key)));

const FILE_TYPES = /\.(ya?ml|json)$/;

/** The files named by -f: a file as is, a folder's *.yaml, *.yml and *.json files (recursively, sorted). */
function filesOf(paths: string[]): string[] {
  const out: string[] = [];
  const walk = (path: string, named: boolean) => {
    let stat: ReturnType<typeof statSync>;
    try {
      stat = statSync(path);
    } catch {
      throw new Error(`-f ${path}: no such file or folder`);
    }
    if (stat.isDirectory()) {
      for (const entry of readdirSync(path).sort()) if (!entry.startsWith('.')) walk(join(path, entry), false);
    } else if (named || FILE_TYPES.test(path)) out.push(path);
  };
  for (const p of paths) walk(p, true);
  return out;
}

async function loadManifests(paths: string[]): Promise<Manifest[]> {
  const all: Manifest[] = [];
  const seen = new Map<string, string>();
  for (const file of filesOf(paths))
    for (const m of parseFile(await readFile(file, 'utf8'), file)) {
      const id = idOf(m.type.name, m.key);
      const before = seen.get(id);
      if (before) throw new Error(`${m.source}: ${m.type.name} ${m.key} is described twice (also in ${before})`);
      seen.set(id, m.source);
      all.push(m);
    }
  return all;
}

const show = (v: unknown): string => (typeof v === 'string' && !v.includes('\n') ? v : JSON.stringify(v));

/** The lines of a change: `Field: before → after`, multi-line text as removed and added lines. */
function changeLines(changes: FieldChange[], created: boolean, colour: boolean): string[] {
  const lines: string[] = [];
  for (const c of changes) {
    if (created) {
      lines.push(paint(`    + ${c.field}: ${show(c.after)}`, 'green', colour));
      continue;
    }
    if (typeof c.before === 'string' && typeof c.after === 'string' && (c.before + c.after).includes('\n')) {
      lines.push(`    ${c.field}:`);
      for (const l of c.before.split('\n')) lines.push(paint(`    - ${l}`, 'red', colour));
      for (const l of c.after.split('\n')) lines.push(paint(`    + ${l}`, 'green', colour));
    } else
      lines.push(`    ${c.field}: ${paint(show(c.before), 'red', colour)} → ${paint(show(c.after), 'green', colour)}`);
  }
  return lines;
}

const VERB_COLOUR = {
  created: 'green',
  changed: 'yellow',
  deleted: 'red',
  unchanged: undefined,
  kept: 'grey',
} as const;

async function apply(ctx: Ctx, flags: ApplyFlags): Promise<void> {
  if (flags.file.length === 0) throw new Error('give the files or folders with -f');
  const manifests = applyOrder(await loadManifests(flags.file));
  const dry = flags.dryRun === true;
  const colour = useColour();
  const outcomes: Outcome[] = [];
  const report = (o: Outcome) => {
    outcomes.push(o);
    if (ctx.format !== 'table') return;
    const verb = paint(o.action.padEnd(9), VERB_COLOUR[o.action], colour);
    write(`${verb} ${o.type} ${o.key}${dry && o.action !== 'unchanged' ? ' (dry run)' : ''}`);
    if (o.changes && o.changes.length > 0) write(changeLines(o.changes, o.action === 'created', colour).join('\n'));
  };
  const planned = new Set(manifests.flatMap(provides));
  // Whether an object the files refer to is on the server, asked once per object.
  const existing = new Map<string, Promise<boolean>>();
  const applyOne = async (m: Manifest): Promise<void> => {
    const path = `/${m.type.name}/${seg(m.key)}`;
    // A dry run refuses what the server would: nothing it prints as created may fail for a missing reference.
    if (dry) await requireReferences(ctx, m, planned, existing);
    const current = await ctx.client.find(path);
    const body = { ...m.desired, ...m.secrets };
    if (!current) {
      const changes = diff(defaultsOf(m.type), m.desired);
      if (!dry) await ctx.client.json('POST', path, body);
      report({ action: 'created', type: m.type.name, key: m.key, ...(dry ? { changes } : {}) });
      return;
    }
    const changes = diff(currentOf(m.type, current), m.desired);
    if (changes.length === 0) {
      report({ action: 'unchanged', type: m.type.name, key: m.key });
      return;
    }
    if (!dry) await ctx.client.json('PUT', path, body);
    report({ action: 'changed', type: m.type.name, key: m.key, changes });
  };
  try {
    for (const m of manifests)
      try {
        await applyOne(m);
      } catch (err) {
        // Which file's object the server refused, then its own words.
        throw new Error(`${m.source} (${m.type.name} ${m.key}): ${errorMessage(err)}`);
      }
    if (flags.prune) await prune(ctx, manifests, dry, report);
  } finally {
    if (ctx.format === 'json') printJson(outcomes);
    else if (ctx.format === 'table') {
      const count = (a: Action) => outcomes.filter((o) => o.action === a).length;
      const summary = `${count('created')} created, ${count('changed')} changed, ${count('unchanged')} unchanged`;
      write(
        `${summary}${flags.prune ? `, ${count('deleted')} deleted` : ''}${dry ? ' (dry run: nothing was changed)' : ''}`,
      );
    }
  }
}

/**
 * What the server checks when it creates or changes an object, for a dry run: the partition of its key and every
 * object it refers to exist, on the server or among the files (which are applied before it). The messages are the
 * server's own (404 for the partition, 400 naming the field).
 */
async function requireReferences(
  ctx: Ctx,
  m: Manifest,
  planned: Set<string>,
  existing: Map<string, Promise<boolean>>,
): Promise<void> {
  for (const r of referencesOf(m)) {
    if (planned.has(r.id)) continue;
    let found = existing.get(r.id);
    if (!found) {
      found = ctx.client.find(`/${r.type}/${seg(r.key)}`).then((o) => o !== undefined);
      existing.set(r.id, found);
    }
    if (await found) continue;
    if (r.path === 'Partition' && r.type === 'Partition')
      throw new Error(`404 Unable to find object ${r.id} (not on the server, nor in the files)`);
    throw new Error(`400 Field "${r.path}": ${r.id} does not exist (not on the server, nor in the files)`);
  }
}

/**
 * Deletes the objects that the files no longer hold, of each type in each partition the files hold objects of that
 * type in: built-in
 * objects never, partitions never, and never the JobDefinition of a chain whose JobChain the files hold. Deletes
 * run in reverse dependency order, so a definition goes before the queue it used.
 */
async function prune(ctx: Ctx, manifests: Manifest[], dry: boolean, report: (o: Outcome) => void): Promise<void> {
  const held = new Set(manifests.map((m) => idOf(m.type.name, m.key)));
  // Only types and partitions that the files hold together: a queue provider of GLOBAL.Local does not put every
  // GLOBAL definition in scope.
  const scopes = new Map<string, ObjectType>();
  // A partition (named by its name alone) lies in no partition's scope.
  for (const m of manifests) if (m.type.key !== 'name') scopes.set(`${m.type.name}\u0000${m.partition}`, m.type);
  const doomed: Manifest[] = [];
  for (const [scope, type] of [...scopes].sort(([a], [b]) => a.localeCompare(b))) {
    const partition = scope.slice(scope.indexOf('\u0000') + 1);
    for await (const item of ctx.client.list(`/${type.name}`, { Partition: partition })) {
      const key = keyOfRendered(item);
      const id = idOf(type.name, key);
      if (held.has(id) || BUILTIN.has(id)) continue;
      // A definition whose twin (its JobChain) the manifests hold is theirs too: the twin makes it.
      const twin = type.traits.twin;
      if (twin && !twin.needsIt && held.has(idOf(twin.type, key))) continue;
      const m = manifestOfServerObject(type, item);
      if (m.partition === partition) doomed.push(m);
    }
  }
  for (const m of applyOrder(doomed).reverse()) {
    if (!dry)
      try {
        await ctx.client.json('DELETE', `/${m.type.name}/${seg(m.key)}`);
      } catch (err) {
        // The server knows best what is built in; it refuses those with 409 and they are kept.
        if (err instanceof ApiError && err.status === 409 && /built in/.test(err.serverMessage)) {
          report({ action: 'kept', type: m.type.name, key: m.key });
          continue;
        }
        throw err;
      }
    report({ action: 'deleted', type: m.type.name, key: m.key });
  }
}

interface ExportFlags extends ClientFlags {
  partition?: string;
  dir?: string;
}

/** The documents of definitions (a chain's JobChain with its JobDefinition), built-in ones left out. */
async function exportDefinitions(ctx: Ctx, keys: string[], flags: ExportFlags): Promise<void> {
  const defType = requireType('JobDefinition');
  const chainType = requireType('JobChain');
  const definitions: Json[] =
    keys.length > 0
      ? await Promise.all(keys.map((k) => ctx.client.get(`/JobDefinition/${seg(k)}`)))
      : (await ctx.client.listAll('/JobDefinition', { Partition: flags.partition })).filter(
          (d: Json) => !BUILTIN.has(idOf('JobDefinition', keyOfRendered(d))),
        );
  const groups: Array<{ key: string; docs: Record<string, unknown>[] }> = [];
  for (const d of definitions) {
    const key = keyOfRendered(d);
    const docs = [exportDocument(defType, d)];
    if (d.JobDefinitionType === 'JobChain') {
      const chain = await ctx.client.find(`/JobChain/${seg(key)}`);
      if (chain) docs.push(exportDocument(chainType, chain));
    }
    groups.push({ key, docs });
  }
  const json = ctx.format === 'json';
  const render = (docs: Record<string, unknown>[]) =>
    json ? `${JSON.stringify(docs, null, 2)}\n` : docs.map((d) => stringify(d, { lineWidth: 0 })).join('---\n');
  if (flags.dir === undefined) {
    process.stdout.write(render(groups.flatMap((g) => g.docs)));
    return;
  }
  await mkdir(flags.dir, { recursive: true });
  for (const g of groups) {
    const file = join(flags.dir, `${g.key}.${json ? 'json' : 'yaml'}`);
    await writeFile(file, render(g.docs));
    process.stderr.write(`wrote ${file}\n`);
  }
}

const HELP_APPLY = `
Each object is a mapping with Type and Key, then its fields as GET shows them, e.g. in YAML:

  Type: Queue
  Key: ETL.Nightly
  ExecutionSize: 4
  ---
  Type: JobDefinition
  Key: ETL.Load
  DefaultQueue: ETL.Nightly
  Script: echo loading

A file holds one or many objects (YAML documents separated by ---, or a JSON object or array). A field left out
is its default. Objects are applied references first; each is printed as created, changed or unchanged.`;

export function registerApplyCommands(program: Command): void {
  clientCommand(program, 'apply', 'create or change the objects described in JSON or YAML files')
    .option(
      '-f, --file <file-or-folder>',
      'a file, or a folder of *.yaml, *.yml and *.json files (repeatable)',
      collect,
      [],
    )
    .option('--dry-run', 'change nothing; print what would change')
    .option('--prune', 'delete objects of the applied types and partitions that the files no longer hold')
    .addHelpText('after', HELP_APPLY)
    .action((flags: ApplyFlags) => apply(contextOf(flags), flags));
  const def = program.commands.find((c) => c.name() === 'def');
  if (!def) throw new Error('register the def command first');
  clientCommand(def, 'export', 'write definitions as files that `millrace apply` reads back (YAML, or -o json)')
    .argument('[definitions...]', 'definitions <partition>.<name> (default: every one not built in)')
    .option('--partition <partition>', 'every definition of this partition')
    .option('--dir <folder>', 'one file per definition in this folder instead of standard output')
    .action((keys: string[], flags: ExportFlags) => exportDefinitions(contextOf(flags), keys, flags));
}

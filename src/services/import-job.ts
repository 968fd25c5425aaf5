import type { Logger } from 'pino';
import { readCar } from '../car/archive.ts';
import type { ImportGate } from './import-gate.ts';
import {
  type ArchiveObject,
  importRuling,
  parseRuleSetProperties,
  type RuledObject,
  rulesOf,
} from '../car/import-rules.ts';
import { type CarLayout, readLayout } from '../car/layout.ts';
import { elementToBody, typeOfElement } from '../car/object-xml.ts';
import { parseXml } from '../car/xml.ts';
import type { JobRecord } from '../domain/job.ts';
import { isFinal } from '../domain/job-status.ts';
import type { Engine, SystemRunner } from '../engine/engine.ts';
import { MillraceError, forbidden, invalid } from '../errors.ts';
import type { TypeName } from '../model/fields.ts';
import { businessKey, parseKey } from '../model/keys.ts';
import type { ObjectType } from '../model/object-type.ts';
import { requireType } from '../model/registry.ts';
import { collectReferences } from '../model/validate.ts';
import { can, type Principal } from '../security/privileges.ts';
import type { Store } from '../store/store.ts';
import type { Clock } from '../time/clock.ts';
import { loopYielder } from '../loop-yield.ts';
import { IMPORT_NOT_PERMITTED, IMPORT_REFUSED } from './car-import.ts';
import type { ImportOutcome, ObjectService } from './objects.ts';
import { keptArchive } from './kept-archive.ts';
import { itemAt } from '../domain/item-at.ts';

export interface ImportJobDeps {
  store: Store;
  engine: Engine;
  objects: ObjectService;
  clock: Clock;
  logger: Logger;
  /** The importing user's privileges, read when the job runs (an import runs as the user who sent it). */
  principalOf(user: string): Promise<Principal | null>;
  /** Imports read their archives one (or a few) at a time: the global bound on import memory. */
  gate: ImportGate;
}

/** An object entry may be as large as a script allows (1,000,000 characters, escaped). */
const ENTRY_XML_LIMITS = { maxBytes: 16 * 1024 * 1024 };

/** Thrown inside the import transaction to roll it back when the job was killed meanwhile. */
class NoLongerRunning extends Error {}

/**
 * Runs System_Import_Archive jobs (docs/architecture.md §14): reads the archive kept with the job, turns every object entry into
 * a registry object, applies the import rule set and target partition, and writes everything in ONE transaction
 * that also finishes the job, so an import is all or nothing, even across a crash (a job that was running when the
 * server stopped ends Unknown and its transaction never committed). The job's stdout.log lists what was created,
 * changed, left unchanged, skipped or refused.
 */
export function importRunner(deps: ImportJobDeps): SystemRunner {
  return (job: JobRecord) => deps.gate.run(() => runImport(deps, job));
}

async function runImport(deps: ImportJobDeps, job: JobRecord): Promise<void> {
  const log = new ImportLog(job);
  try {
    const p = await deps.principalOf(job.submittedBy);
    if (!p) throw forbidden(`User ${job.submittedBy} no longer exists or is disabled`);
    const bytes = await keptArchive(deps.store, job.jobId);
    if (!bytes) throw invalid('The archive of this import is gone (it was imported or discarded before)');
    const plan = await planImport(deps, job, p, bytes, log);
    const results = await deps.engine.mutate(async (tx, effects, kernel) => {
      const current = await tx.jobs.get(job.jobId);
      if (current?.status !== 'Running') throw new NoLongerRunning();
      const done: Array<{ type: TypeName; result: ImportOutcome }> = [];
      // The transaction holds the one SQLite connection until it commits: requests that need the database wait for
      // it, but between objects the event loop serves the others (cached reads, health, metrics, the live feed).
      const slice = loopYielder();
      for (const o of plan.objects) {
        await slice();
        try {
          done.push({
            type: o.type,
            result: await deps.objects.importObject(tx, p, requireType(o.type), o.key, o.body),
          });
        } catch (e) {
          log.refused(businessKey(o.type, o.key), e);
          throw e;
        }
      }
      for (const r of done) log.outcome(businessKey(r.type, r.result.after.key), r.result.outcome);
      await writeLibraryFiles(tx, p, plan.libraryFiles, deps.clock.now(), log);
      await tx.blobs.delete('archive', String(job.jobId));
      const summary = log.summary('Completed');
      await attachLog(deps, tx, job.jobId, log);
      await kernel.finish(
        tx,
        current,
        { status: 'Completed', returnCode: 0, notes: [summary] },
        deps.clock.now(),
        effects,
      );
      return done;
    });
    const pause = loopYielder();
    for (const r of results) {
      await pause();
      await deps.objects.importCommitted(requireType(r.type), r.result);
    }
  } catch (e) {
    if (!(e instanceof MillraceError) && !(e instanceof NoLongerRunning))
      deps.logger.error({ err: e, jobId: job.jobId }, 'import failed');
    await fail(deps, job, log, e);
  }
}

interface ImportPlan {
  objects: RuledObject[];
  libraryFiles: Array<{ library: string; file: string; data: Buffer }>;
}

/** Everything that needs no transaction: reading, parsing, rules, field checks, host-name checks. */
async function planImport(
  deps: ImportJobDeps,
  job: JobRecord,
  principal: Principal,
  bytes: Buffer,
  log: ImportLog,
): Promise<ImportPlan> {
  const param = (name: string) => job.data.parameters.find((x) => x.Name === name)?.InValueString ?? null;
  // Entries are parsed as they are inflated and their XML dropped at once, so an archive never sits in memory
  // both inflated and parsed; once an entry is refused nothing will be imported, so parsed bodies stop being kept
  // (the rest are still read, for the log).
  const layout: CarLayout = { objects: [], libraryFiles: [] };
  const parsed: ArchiveObject[] = [];
  await readCar(
    bytes,
    {},
    {
      retain: () => false,
      visit: (raw) => {
        const one = readLayout([raw]);
        layout.libraryFiles.push(...one.libraryFiles);
        for (const entry of one.objects) {
          try {
            const root = parseXml(entry.data, ENTRY_XML_LIMITS);
            const type = typeOfElement(root);
            if (type.name !== entry.type) throw invalid(`The entry holds a ${type.name}, not a ${entry.type}`);
            const body = elementToBody(type, root);
            checkIdentity(type, entry.key, body);
            checkLengths(type, body);
            if (log.refusals === 0) parsed.push({ type: type.name, key: entry.key, body });
          } catch (e) {
            log.refused(entry.entry, e);
          }
        }
      },
    },
  );
  const ruleSetKey = param('ImportRuleSet');
  const ruleSet = ruleSetKey ? await deps.store.getObject('ImportRuleSet', ruleSetKey) : undefined;
  if (ruleSetKey && (!ruleSet || !can(principal, 'ImportRuleSet', ruleSet.partition, 'View')))
    throw invalid(`Import rule set ${businessKey('ImportRuleSet', ruleSetKey)} does not exist`);
  const rules = rulesOf(
    ruleSet?.data,
    param('TargetPartition'),
    parseRuleSetProperties(param('RuleSetProperties') ?? undefined),
  );
  // Every step lets other requests in every few ms (better-sqlite3's awaits never do), the transaction's too.
  const pause = loopYielder();
  const { kept, skipped, reference, rule } = importRuling(parsed, rules);
  const imported: RuledObject[] = [];
  for (const o of kept) {
    await pause();
    imported.push(rule(o));
  }
  for (const s of skipped) log.line('skipped', businessKey(s.type, s.key), 'left out by the import rule set');
  for (const o of imported) {
    await pause();
    try {
      await deps.objects.precheckImport(requireType(o.type), o.key, o.body);
    } catch (e) {
      log.refused(businessKey(o.type, o.key), e);
    }
  }
  if (log.refusals > 0) throw new ImportRefused(log.refusals);
  return {
    objects: await dependencyOrder(imported, pause),
    // A library's files go where the archive's Library goes (or where a mapping sends its partition).
    libraryFiles: layout.libraryFiles.map((f) => ({ ...f, library: reference('Library', f.library) })),
  };
}

/** Text longer than its field allows is refused while parsing, before such bodies pile up in memory. */
function checkLengths(type: ObjectType, body: Record<string, unknown>): void {
  for (const [name, value] of Object.entries(body)) {
    const kind = type.byName.get(name)?.kind;
    if (typeof value === 'string' && kind && 'maxLength' in kind && value.length > kind.maxLength)
      throw invalid(`Field "${name}" must be at most ${kind.maxLength} characters`);
  }
}

/** The identity fields an entry carries must name the object its entry name names. */
function checkIdentity(type: ObjectType, key: string, body: Record<string, unknown>): void {
  const identity = parseKey(type.key, key)?.identity ?? {};
  for (const name of type.identity) {
    const given = body[name];
    if (given === undefined || given === null) continue;
    const kind = type.byName.get(name)?.kind;
    const canonical =
      kind?.kind === 'reference' ? parseKey(requireType(kind.type).key, String(given))?.key : String(given);
    if (canonical !== identity[name])
      throw invalid(`Field "${name}" (${String(given)}) does not match the entry's name`);
  }
}

class ImportRefused extends MillraceError {
  constructor(count: number) {
    super(422, 'UNPROCESSABLE', `${count} ${count === 1 ? 'entry was' : 'entries were'} refused; nothing was imported`);
  }
}

/** Drops kept archives whose import job is final or gone (after a restart); queued imports keep theirs. */
export async function discardFinishedArchives(store: Store): Promise<void> {
  const owners = new Set((await store.blobs.names('archive')).map((b) => b.owner));
  for (const owner of owners) {
    const job = await store.jobs.get(Number(owner));
    if (!job || isFinal(job.status)) await store.blobs.delete('archive', owner);
  }
}

/** Objects the archive holds are written before the objects that refer to them (cycles keep archive order). */
async function dependencyOrder<T extends { type: TypeName; key: string; body: Record<string, unknown> }>(
  objects: readonly T[],
  pause: () => Promise<void> | undefined,
): Promise<T[]> {
  const byLabel = new Map(objects.map((o) => [businessKey(o.type, o.key), o]));
  const state = new Map<string, 'visiting' | 'done'>();
  const out: T[] = [];
  const visit = (o: T) => {
    const label = businessKey(o.type, o.key);
    if (state.has(label)) return;
    state.set(label, 'visiting');
    const deps = collectReferences(requireType(o.type).fields, o.body).map((r) => {
      const k = parseKey(requireType(r.type).key, r.key);
      return k ? businessKey(r.type, k.key) : '';
    });
    // A JobChain goes after the JobDefinition of the same name, its twin (creating the chain would make one).
    const twin = requireType(o.type).traits.twin;
    if (twin?.needsIt) deps.push(businessKey(twin.type, o.key));
    for (const dep of deps) {
      const target = byLabel.get(dep);
      if (target && state.get(dep) === undefined) visit(target);
    }
    state.set(label, 'done');
    out.push(o);
  };
  for (const o of objects) {
    await pause();
    visit(o);
  }
  return out;
}

/** Library files go into the database with the objects (a Library's Files are read from them). */
async function writeLibraryFiles(
  tx: Store,
  principal: Principal,
  files: ImportPlan['libraryFiles'],
  now: number,
  log: ImportLog,
): Promise<void> {
  for (const f of files) {
    const library = await tx.getObject('Library', f.library);
    const label = businessKey('Library', f.library);
    try {
      if (!library || !can(principal, 'Library', library.partition, 'View')) throw invalid(`${label} does not exist`);
      if (!can(principal, 'Library', library.partition, 'Edit'))
        throw forbidden(`You need the Edit privilege to change ${label}`);
    } catch (e) {
      log.refused(`${label} file ${f.file}`, e);
      throw e;
    }
    await tx.blobs.put('library', library.key, f.file, f.data, now);
    log.line('stored', `${label} file ${f.file}`, `${f.data.length} bytes`);
  }
}

async function attachLog(deps: ImportJobDeps, tx: Store, jobId: number, log: ImportLog): Promise<void> {
  const text = Buffer.from(log.text());
  await deps.engine.files.replace(jobId, 'stdout.log', text);
  const existing = (await tx.jobs.listFiles(jobId)).find((f) => f.name === 'stdout.log');
  if (existing) {
    await tx.jobs.updateFiles([{ ...existing, size: text.length }]);
    return;
  }
  const uniqueId = itemAt(await tx.nextUniqueIds(1), 0);
  await tx.jobs.insertFiles([
    {
      uniqueId,
      jobId,
      name: 'stdout.log',
      fileOrder: 1,
      type: 'Output',
      format: 'text/plain',
      size: text.length,
    },
  ]);
}

/** Ends the job in Error with the log, and drops the archive; nothing of it was imported. */
async function fail(deps: ImportJobDeps, job: JobRecord, log: ImportLog, e: unknown): Promise<void> {
  const notPermitted = e instanceof MillraceError && e.status === 403;
  if (!(e instanceof ImportRefused) && !(e instanceof NoLongerRunning) && log.refusals === 0) log.refused('archive', e);
  await deps.engine.mutate(async (tx, effects, kernel) => {
    await tx.blobs.delete('archive', String(job.jobId));
    const current = await tx.jobs.get(job.jobId);
    if (current?.status !== 'Running') return;
    const summary = log.summary('Error');
    await attachLog(deps, tx, job.jobId, log);
    await kernel.finish(
      tx,
      current,
      { status: 'Error', returnCode: notPermitted ? IMPORT_NOT_PERMITTED : IMPORT_REFUSED, notes: [summary] },
      deps.clock.now(),
      effects,
    );
  });
}

/** The import's log: one line per object, and the counts that make the job's note. */
class ImportLog {
  private readonly lines: string[] = [];
  private readonly counts = new Map<string, number>();
  private firstRefusal: string | undefined;
  refusals = 0;

  constructor(job: JobRecord) {
    const file = job.data.parameters.find((x) => x.Name === 'FileName')?.InValueString ?? 'the archive';
    this.lines.push(`Import of ${file} (Job:${job.jobId}) for ${job.submittedBy}`);
  }

  line(what: string, subject: string, detail?: string): void {
    this.counts.set(what, (this.counts.get(what) ?? 0) + 1);
    this.lines.push(`${what.padEnd(9)} ${subject}${detail ? `: ${detail}` : ''}`);
  }

  outcome(subject: string, outcome: ImportOutcome['outcome']): void {
    this.line(outcome, subject, outcome === 'kept' ? 'built in, left as it is' : undefined);
  }

  refused(subject: string, e: unknown): void {
    this.refusals += 1;
    const message = e instanceof MillraceError ? e.message : 'unexpected error (see the server log)';
    this.firstRefusal ??= `${subject}: ${message}`;
    this.line('refused', subject, message);
  }

  /** The closing line (also written to the log) and the job's note. */
  summary(status: 'Completed' | 'Error'): string {
    const parts = ['created', 'changed', 'unchanged', 'kept', 'skipped', 'stored', 'refused']
      .filter((k) => this.counts.has(k))
      .map((k) => `${this.counts.get(k)} ${k}`);
    const counts = parts.length > 0 ? parts.join(', ') : 'no objects';
    const first = this.firstRefusal ? ` (${this.firstRefusal})` : '';
    const text =
      status === 'Completed' ? `Import completed: ${counts}` : `Import failed, nothing was imported: ${counts}${first}`;
    this.lines.push(text);
    return text;
  }

  text(): string {
    return `${this.lines.join('\n')}\n`;
  }
}

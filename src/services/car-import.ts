import { readCar } from '../car/archive.ts';
import { parseRuleSetProperties } from '../car/import-rules.ts';
import { MANIFEST, readLayout } from '../car/layout.ts';
import { SIGNATURE_ENTRY, type TrustedKey, verifyEntries } from '../car/signing.ts';
import type { JobRecord } from '../domain/job.ts';
import { isFinal } from '../domain/job-status.ts';
import type { Engine } from '../engine/engine.ts';
import { forbidden, invalid, unprocessable } from '../errors.ts';
import { NAME_PATTERN } from '../model/fields.ts';
import { businessKey, parseKey } from '../model/keys.ts';
import { can, type Principal } from '../security/privileges.ts';
import type { Store } from '../store/store.ts';
import type { ImportGate } from './import-gate.ts';
import type { JobService } from './jobs.ts';
import { keepArchive } from './kept-archive.ts';

export const IMPORT_DEFINITION = 'GLOBAL.System_Import_Archive';
export const DEFAULT_CAR_NAME = 'carin.car';

/** What a caller asks of an import (car-put headers, POST /Import query parameters). */
export interface ImportRequest {
  targetPartition?: string;
  /** `<partition>.<name>` of an ImportRuleSet. */
  ruleSet?: string;
  /** `p1=v1,p2=v2`, substituted into the rule set's property overrides. */
  ruleSetProperties?: string;
  description?: string;
  fileName?: string;
  /** The caller says the archive is signed: an unsigned one is then refused. */
  signed?: boolean;
}

/**
 * Return codes of a failed import job, so a waiting caller can answer with the right status:
 * REFUSED (an object or the archive is invalid: 422), NOT_PERMITTED (a privilege is missing: 403).
 */
export const IMPORT_REFUSED = 1;
export const IMPORT_NOT_PERMITTED = 2;

export interface ImportServiceDeps {
  store: Store;
  engine: Engine;
  jobs: JobService;
  /** The keys a signed archive must be signed with (read on each import, so adding a key needs no restart). */
  trustedKeys(): Promise<TrustedKey[]>;
  /** The bound on archive requests received and checked at once. */
  gate: ImportGate;
}

/**
 * Receives CAR archives (docs/architecture.md §14). What can be judged from the bytes alone is judged before anything is stored:
 * size and inflation caps (413), unsafe or unexpected entries and signatures (422), the caller's right to import
 * (403), the request's own fields (400). The archive is then kept in the database and a System_Import_Archive job
 * is submitted in the same transaction; the job (import-job.ts) does the import, all or nothing.
 */
export class ImportService {
  private readonly deps: ImportServiceDeps;

  constructor(deps: ImportServiceDeps) {
    this.deps = deps;
  }

  get gate(): ImportGate {
    return this.deps.gate;
  }

  /**
   * The right to import at all (Submit on System_Import_Archive, else 403): both interfaces check it before they
   * read an archive (docs/architecture.md §10), and `start` again.
   */
  authorize(principal: Principal): void {
    const definitionKey = parseKey('partitioned', IMPORT_DEFINITION) as NonNullable<ReturnType<typeof parseKey>>;
    if (!can(principal, 'JobDefinition', definitionKey.partition, 'Submit'))
      throw forbidden(
        `You need the Submit privilege on ${businessKey('JobDefinition', IMPORT_DEFINITION)} to import archives`,
      );
  }

  async start(principal: Principal, bytes: Buffer, request: ImportRequest): Promise<JobRecord> {
    this.authorize(principal);
    const ruleSet = await this.checkRuleSet(principal, request.ruleSet);
    const parameters = this.parameters(principal, { ...request, ruleSet });
    if (bytes.length === 0) throw invalid('The body is empty: send the CAR file');
    // Every entry is inflated and checked, but only the manifest and the signature are kept meanwhile.
    const entries = await readCar(bytes, {}, { retain: (name) => name === MANIFEST || name === SIGNATURE_ENTRY });
    const layout = readLayout(entries);
    // Keys are read only for a signed archive, so a trusted-keys problem cannot stop unsigned imports.
    const isSigned = entries.some((e) => e.name === SIGNATURE_ENTRY);
    const signature = verifyEntries(entries, isSigned ? await this.deps.trustedKeys() : []);
    if (request.signed && !signature.signed)
      throw unprocessable('The archive is not signed (X-Vendor-Signed-Car is true)');
    if (layout.objects.length === 0 && layout.libraryFiles.length === 0)
      throw unprocessable('The archive holds no objects');
    const description =
      request.description ?? layout.manifestName ?? `Import definitions from: ${request.fileName ?? DEFAULT_CAR_NAME}`;
    return this.deps.engine.submit(async (tx, effects, kernel) => {
      const definition = await tx.getObject('JobDefinition', IMPORT_DEFINITION);
      if (!definition) throw new Error(`${IMPORT_DEFINITION} is missing`);
      const created = await this.deps.jobs.createFrom(
        tx,
        kernel,
        principal,
        definition,
        {
          parameters,
          requestedStart: undefined,
          queue: undefined,
          priority: undefined,
          description: description.slice(0, 255),
          holdOnSubmit: false,
          submitFrame: undefined,
          maxRunTime: undefined,
        },
        effects,
      );
      await keepArchive(tx, created.jobId, bytes, created.creationTime);
      return created;
    });
  }

  /** Resolves once the job is final (polling the database, so it also sees a job another node ran). */
  async waitForEnd(jobId: number): Promise<JobRecord> {
    let delay = 10;
    for (;;) {
      const job = await this.deps.store.jobs.get(jobId);
      if (!job) throw new Error(`import job ${jobId} disappeared`);
      if (isFinal(job.status)) return job;
      await new Promise((r) => setTimeout(r, delay));
      delay = Math.min(delay * 2, 200);
    }
  }

  private parameters(principal: Principal, r: ImportRequest): Array<{ Name: string; InValueString: string }> {
    const out: Array<{ Name: string; InValueString: string }> = [];
    const fileName = r.fileName ?? DEFAULT_CAR_NAME;
    if (fileName.length > 255 || [...fileName].some((c) => c < ' ' || c === '\x7f'))
      throw invalid('The file name must be one line of at most 255 characters');
    out.push({ Name: 'FileName', InValueString: fileName });
    if (r.targetPartition !== undefined) {
      if (!NAME_PATTERN.test(r.targetPartition))
        throw invalid(`TargetPartition "${r.targetPartition}" is not a partition name (letters, digits and _)`);
      if (!can(principal, 'Partition', r.targetPartition, 'View'))
        throw invalid(`Partition ${r.targetPartition} does not exist`);
      out.push({ Name: 'TargetPartition', InValueString: r.targetPartition });
    }
    if (r.ruleSet !== undefined) out.push({ Name: 'ImportRuleSet', InValueString: r.ruleSet });
    if (r.ruleSetProperties !== undefined && r.ruleSetProperties.trim() !== '') {
      parseRuleSetProperties(r.ruleSetProperties); // 400 now rather than a failed job later
      out.push({ Name: 'RuleSetProperties', InValueString: r.ruleSetProperties });
    }
    if (r.description !== undefined && (r.description.length > 255 || /[\r\n]/.test(r.description)))
      throw invalid('The description must be one line of at most 255 characters');
    return out;
  }

  /** The rule set's canonical key; 400 when it does not exist or cannot be seen. */
  private async checkRuleSet(principal: Principal, key: string | undefined): Promise<string | undefined> {
    if (key === undefined) return undefined;
    const parsed = parseKey('partitioned', key);
    const found =
      parsed && can(principal, 'ImportRuleSet', parsed.partition, 'View')
        ? await this.deps.store.getObject('ImportRuleSet', parsed.key)
        : undefined;
    if (!found || !parsed)
      throw invalid(`Import rule set ${businessKey('ImportRuleSet', parsed?.key ?? key)} does not exist`);
    return parsed.key;
  }
}

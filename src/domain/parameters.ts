import { invalid } from '../errors.ts';
import { unstorableText } from './characters.ts';
import { isPlainObject } from './json.ts';
import { emptyRecord } from './own.ts';
import { DateParseError, formatInstant, parseDate, type ZonedInstant } from '../time/date-format.ts';
import type { JobParameter } from './job.ts';
import { itemAt } from './item-at.ts';

/**
 * Job parameters (docs/architecture.md §7, §12): checked against the definition at submit, turned into environment variables
 * for the script, and filled from the script's Out values. Pure.
 */

/** A parameter as declared on a JobDefinition (registry: JobDefinition.Parameters). */
export interface DefinitionParameter {
  Name: string;
  Direction: 'In' | 'Out' | 'InOut';
  DataType: 'String' | 'Number' | 'Date';
  DefaultValue: string | null;
  Optional: boolean;
}

type Value = string | number | ZonedInstant;

/** Converts a given value to the parameter's data type, or explains why it cannot. */
function convert(p: Pick<DefinitionParameter, 'Name' | 'DataType'>, given: unknown, zone: string, at: string): Value {
  switch (p.DataType) {
    case 'String':
      if (typeof given === 'string') {
        const bad = unstorableText(given);
        if (bad) throw invalid(`${at}: the value of parameter ${p.Name} ${bad}`);
        return given;
      }
      if (typeof given === 'number' && Number.isFinite(given)) return String(given);
      break;
    case 'Number':
      if (typeof given === 'number' && Number.isFinite(given)) return given;
      if (typeof given === 'string' && given.trim() !== '' && Number.isFinite(Number(given))) return Number(given);
      break;
    case 'Date':
      if (typeof given === 'string')
        try {
          return parseDate(given, zone);
        } catch (e) {
          if (!(e instanceof DateParseError)) throw e;
          throw invalid(`${at}: parameter ${p.Name} is a Date; ${e.message}`);
        }
      break;
  }
  throw invalid(`${at}: parameter ${p.Name} is a ${p.DataType}, not ${JSON.stringify(given)}`);
}

const emptyParameter = (p: DefinitionParameter, definitionKey: string): JobParameter => ({
  Name: p.Name,
  Direction: p.Direction,
  DataType: p.DataType,
  JobDefinitionParameter: `JobDefinitionParameter:${definitionKey}.${p.Name}`,
  InValueString: null,
  InValueNumber: null,
  InValueDate: null,
  OutValueString: null,
  OutValueNumber: null,
  OutValueDate: null,
});

function setIn(target: JobParameter, v: Value | null): void {
  target.InValueString = typeof v === 'string' ? v : null;
  target.InValueNumber = typeof v === 'number' ? v : null;
  target.InValueDate = v !== null && typeof v === 'object' ? v : null;
}

function setOut(target: JobParameter, v: Value | null): void {
  target.OutValueString = typeof v === 'string' ? v : null;
  target.OutValueNumber = typeof v === 'number' ? v : null;
  target.OutValueDate = v !== null && typeof v === 'object' ? v : null;
}

/**
 * The parameters of a new job: the definition's, with defaults, overridden by the submit body's items (each naming
 * its parameter by `Name` or by `JobDefinitionParameter`). Unknown names, wrong data types, values for Out
 * parameters and missing mandatory values are 400s naming the item. The items' shape (their fields and types) is
 * the Job's parameter record (model/types/Job.ts), checked by the submit form before they come here.
 */
export function buildJobParameters(
  declared: readonly DefinitionParameter[],
  items: unknown,
  definitionKey: string,
  zone: string,
): JobParameter[] {
  const result = declared.map((p) => emptyParameter(p, definitionKey));
  const byName = new Map(result.map((r, i) => [r.Name, { param: itemAt(declared, i), job: r }]));
  const given = new Set<string>();
  if (items !== undefined && items !== null) {
    if (!Array.isArray(items)) throw invalid('Field "JobParameters" must be a list of parameters');
    for (const [i, item] of items.entries()) {
      const at = `Field "JobParameters[${i}]"`;
      if (!isPlainObject(item)) throw invalid(`${at} must be an object`);
      const name = parameterName(item, definitionKey, at);
      const entry = byName.get(name);
      if (!entry) throw invalid(`${at}: ${definitionKey} has no parameter ${name}`);
      if (given.has(name)) throw invalid(`${at}: parameter ${name} is given twice`);
      // Copied from GET /Job: what the definition declares is read-only, accepted when unchanged.
      for (const k of ['Direction', 'DataType'] as const)
        if (item[k] !== undefined && item[k] !== entry.param[k])
          throw invalid(`Field "JobParameters[${i}].${k}" is read-only: parameter ${name} is ${entry.param[k]}`);
      given.add(name);
      const values = ['InValueString', 'InValueNumber', 'InValueDate'].filter(
        (k) => item[k] !== undefined && item[k] !== null,
      );
      if (values.length > 1) throw invalid(`${at}: give one of InValueString, InValueNumber, InValueDate`);
      if (values.length === 0) continue;
      if (entry.param.Direction === 'Out')
        throw invalid(`${at}: parameter ${name} is an Out parameter and takes no value`);
      setIn(entry.job, convert(entry.param, item[itemAt(values, 0)], zone, at));
    }
  }
  for (const { param, job } of byName.values()) {
    if (param.Direction === 'Out' || given.has(param.Name)) continue;
    if (param.DefaultValue !== null)
      setIn(job, convert(param, param.DefaultValue, zone, `Parameter ${param.Name} default`));
  }
  for (const { param, job } of byName.values()) {
    const empty = job.InValueString === null && job.InValueNumber === null && job.InValueDate === null;
    if (param.Direction !== 'Out' && empty && !param.Optional)
      throw invalid(`Field "JobParameters": parameter ${param.Name} is mandatory and has no value`);
  }
  return result;
}

function parameterName(item: Record<string, unknown>, definitionKey: string, at: string): string {
  if (typeof item.Name === 'string') return item.Name;
  if (item.Name !== undefined && item.Name !== null) throw invalid(`${at}.Name must be a string`);
  const ref = item.JobDefinitionParameter;
  if (typeof ref !== 'string') throw invalid(`${at} must name its parameter by Name or JobDefinitionParameter`);
  const prefix = `JobDefinitionParameter:${definitionKey}.`;
  if (!ref.startsWith(prefix))
    throw invalid(`${at}.JobDefinitionParameter must be ${prefix}<parameter name>, not ${JSON.stringify(ref)}`);
  return ref.slice(prefix.length);
}

/**
 * The parameters of a resubmitted job: the original's In values, overridden by the body's items (resubmit form of
 * a JobDefinitionParameter key, or by Name). Out values start empty.
 */
export function resubmitParameters(
  original: readonly JobParameter[],
  items: unknown,
  definitionKey: string,
  zone: string,
): JobParameter[] {
  const declared: DefinitionParameter[] = original.map((p) => ({
    Name: p.Name,
    Direction: p.Direction,
    DataType: p.DataType,
    DefaultValue: null,
    Optional: true,
  }));
  checkOutValues(original, items, definitionKey);
  const result = buildJobParameters(declared, items, definitionKey, zone);
  for (const [i, p] of result.entries()) {
    const before = itemAt(original, i);
    if (p.InValueString === null && p.InValueNumber === null && p.InValueDate === null) {
      p.InValueString = before.InValueString;
      p.InValueNumber = before.InValueNumber;
      p.InValueDate = before.InValueDate;
    }
    p.JobDefinitionParameter = before.JobDefinitionParameter;
  }
  return result;
}

const OUT_FIELDS = ['OutValueString', 'OutValueNumber', 'OutValueDate'] as const;

/**
 * Out values in a resubmit body (items copied from GET /Job) are the original job's results: read-only, accepted
 * when they are as the original has them, 400 naming them when changed. The new job starts without any.
 */
function checkOutValues(original: readonly JobParameter[], items: unknown, definitionKey: string): void {
  if (!Array.isArray(items)) return;
  for (const [i, item] of items.entries()) {
    if (!isPlainObject(item)) continue;
    const at = `Field "JobParameters[${i}]"`;
    const name = parameterName(item, definitionKey, at);
    const before = original.find((p) => p.Name === name);
    if (!before) continue;
    for (const k of OUT_FIELDS) {
      if (item[k] === undefined) continue;
      const was = before[k];
      const shown = was !== null && typeof was === 'object' ? formatInstant(was.ms, was.zone) : was;
      if (item[k] !== shown)
        throw invalid(
          `Field "JobParameters[${i}].${k}" is read-only: it is ${JSON.stringify(shown)} and cannot be changed`,
        );
    }
  }
}

/** Text of a value as the script sees it. */
const asText = (v: Value): string => (typeof v === 'object' ? formatInstant(v.ms, v.zone) : String(v));

/** In and InOut values as environment variables for the script (never pasted into script text). */
export function parameterEnvironment(params: readonly JobParameter[]): Record<string, string> {
  const env = emptyRecord<string>();
  for (const p of params) {
    if (p.Direction === 'Out') continue;
    const v = p.InValueString ?? p.InValueNumber ?? p.InValueDate;
    if (v !== null) env[p.Name] = asText(v);
  }
  return env;
}

export const outNames = (params: readonly JobParameter[]): string[] =>
  params.filter((p) => p.Direction !== 'In').map((p) => p.Name);

/**
 * Applies Out values reported as text (by an agent's script) to the parameters; a value that does not fit the
 * data type is not stored and is explained in the returned notes.
 */
export function applyOutText(params: JobParameter[], out: Record<string, string>, zone: string): string[] {
  const notes: string[] = [];
  for (const p of params) {
    if (p.Direction === 'In' || !Object.hasOwn(out, p.Name)) continue;
    const text = out[p.Name];
    if (text === undefined) continue;
    try {
      setOut(p, convert(p, text, zone, 'Out value'));
    } catch {
      notes.push(`Out parameter ${p.Name}: ${JSON.stringify(text.slice(0, 100))} is not a ${p.DataType}`);
    }
  }
  return notes;
}

/** The `{Name, OutValue}` items of updateJob: only Out and InOut parameters, values of their type. */
export function applyOutItems(params: JobParameter[], items: unknown, zone: string): void {
  if (items === undefined || items === null) return;
  if (!Array.isArray(items)) throw invalid('Field "JobParameters" must be a list of {Name, OutValue}');
  const updates: Array<[JobParameter, Value | null]> = [];
  for (const [i, item] of items.entries()) {
    const at = `Field "JobParameters[${i}]"`;
    if (!isPlainObject(item)) throw invalid(`${at} must be an object`);
    for (const k of Object.keys(item))
      if (k !== 'Name' && k !== 'OutValue') throw invalid(`${at}: unknown field "${k}" (give Name and OutValue)`);
    if (typeof item.Name !== 'string') throw invalid(`${at}.Name must be the name of an Out parameter`);
    const p = params.find((x) => x.Name === item.Name);
    if (!p) throw invalid(`${at}: the job has no parameter ${item.Name}`);
    if (p.Direction === 'In') throw invalid(`${at}: parameter ${p.Name} is an In parameter`);
    const v = item.OutValue;
    if (v !== null && typeof v !== 'string' && typeof v !== 'number')
      throw invalid(`${at}.OutValue must be a string or a number`);
    updates.push([p, v === null || v === undefined ? null : convert(p, v, zone, at)]);
  }
  for (const [p, v] of updates) setOut(p, v);
}

/** The value a parameter carries on: its Out value once set, else its In value; dates as text. */
export function currentValue(p: JobParameter): string | number | null {
  const v =
    p.OutValueString ?? p.OutValueNumber ?? p.OutValueDate ?? p.InValueString ?? p.InValueNumber ?? p.InValueDate;
  if (v === null) return null;
  return typeof v === 'object' ? asText(v) : v;
}

/** Sets a parameter's In value from a mapped value (a chain mapping), converted to its data type; null clears it. */
export function setMappedValue(p: JobParameter, value: string | number | null, zone: string): void {
  setIn(p, value === null ? null : convert(p, value, zone, 'Mapped value'));
}

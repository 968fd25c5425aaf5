// What decides whether a chain's step or call runs and with which values (docs/architecture.md §3): its
// precondition, and the parameter mappings that set a call's In values when its step starts.
import { evalCondition, parseCondition } from '../domain/chain-logic.ts';
import type { ChainCallSpec, JobRecord, PreconditionSpec } from '../domain/job.ts';
import { emptyRecord } from '../domain/own.ts';
import { currentValue, setMappedValue } from '../domain/parameters.ts';
import { isOpen } from '../domain/time-window.ts';
import { errorMessage } from '../errors.ts';
import { fieldDefault } from '../model/data.ts';
import type { Store } from '../store/store.ts';
import { callSlot, newestBySlot, stepSlot, structureOf } from './chain-creation.ts';
import { loadWindow } from './windows.ts';

/** A precondition: none holds; a time window must be open (or closed, as asked) now; an expression must be true. */
export async function holds(
  tx: Store,
  pre: PreconditionSpec | null | undefined,
  chain: JobRecord,
  now: number,
): Promise<boolean> {
  if (!pre) return true;
  if (pre.TimeWindow) {
    const window = await loadWindow(tx, pre.TimeWindow, pre.TimeZone ?? chain.data.zone);
    const open = window !== undefined && isOpen(window, now);
    return (pre.TimeWindowStatus ?? fieldDefault('JobChain', 'Steps', 'Precondition', 'TimeWindowStatus')) === 'Open'
      ? open
      : !open;
  }
  if (pre.Expression) {
    const values = emptyRecord<string | number | null>();
    for (const p of chain.data.parameters) values[p.Name] = currentValue(p);
    try {
      return evalCondition(parseCondition(pre.Expression), values);
    } catch (e) {
      chain.data.notes.push(`Precondition ${JSON.stringify(pre.Expression)}: ${errorMessage(e)}`);
      return false;
    }
  }
  return true;
}

/** Sets the call's In values from its mappings; returns why it cannot run, or undefined. */
export async function applyMappings(
  tx: Store,
  chain: JobRecord,
  spec: ChainCallSpec,
  call: JobRecord,
): Promise<string | undefined> {
  const structure = await structureOf(tx, chain);
  let steps: Map<number, JobRecord> | undefined;
  for (const m of spec.ParameterMappings ?? []) {
    const target = call.data.parameters.find((p) => p.Name === m.Parameter);
    if (!target) {
      call.data.notes.push(`Mapping to ${m.Parameter} ignored: ${call.definition} has no such parameter now`);
      continue;
    }
    let value: string | number | null = null;
    if (m.Source === 'Value') {
      if (m.Value === null || m.Value === undefined) continue;
      value = m.Value;
    } else if (m.Source === 'ChainParameter') {
      const p = chain.data.parameters.find((x) => x.Name === m.ChainParameter);
      value = p ? currentValue(p) : null;
    } else {
      steps ??= newestBySlot(await tx.jobs.listChildren(chain.jobId), stepSlot);
      const fromStep = steps.get(structure.steps.findIndex((s) => s.Name === m.FromStep));
      const fromCall = fromStep
        ? newestBySlot(await tx.jobs.listChildren(fromStep.jobId), callSlot).get((m.FromCall ?? 1) - 1)
        : undefined;
      const p = fromCall?.data.parameters.find((x) => x.Name === m.FromParameter);
      value = p ? currentValue(p) : null;
    }
    try {
      setMappedValue(target, value, call.data.zone);
    } catch {
      return `Parameter ${m.Parameter}: ${JSON.stringify(value)} is not a ${target.DataType}`;
    }
  }
  return undefined;
}

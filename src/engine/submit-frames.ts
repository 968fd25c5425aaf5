import type { FrameElement, FrameSpec } from '../domain/recurrence.ts';
import { FRAME_UNITS } from '../model/types/SubmitFrame.ts';
import { isPlainObject } from '../model/validate.ts';
import type { Store } from '../store/store.ts';
import { loadWindow } from './windows.ts';

/**
 * Reads SubmitFrame objects into FrameSpecs (src/domain/recurrence.ts) with their time windows resolved.
 *
 * Zone: the frame's TimeZone, else `fallbackZone` (the job's); windows without a TimeZone of their own are read in
 * that same zone, since the frame is what uses them. An element that names a window that no longer exists
 * (references are integrity-checked, so it should not happen) is dropped rather than failing every recurrence of the
 * frame: a `during` restriction then no longer restricts, an openings element no longer fires.
 */
export async function loadFrame(tx: Store, key: string, fallbackZone: string): Promise<FrameSpec | undefined> {
  const object = await tx.getObject('SubmitFrame', key);
  if (!object) return undefined;
  const data = object.data;
  const zone = typeof data.TimeZone === 'string' && data.TimeZone !== '' ? data.TimeZone : fallbackZone;
  const elements: FrameElement[] = [];
  for (const raw of Array.isArray(data.Elements) ? data.Elements.filter(isPlainObject) : []) {
    const element = await toElement(tx, raw, zone);
    if (element) elements.push(element);
  }
  const cron =
    typeof data.CronExpression === 'string' && data.CronExpression.trim() !== '' ? data.CronExpression : null;
  return {
    zone,
    endDate: isPlainObject(data.EndDate) && typeof data.EndDate.ms === 'number' ? data.EndDate.ms : null,
    skipWhenClosed: data.SkipWhenClosed === true,
    elements,
    cron,
  };
}

async function toElement(tx: Store, raw: Record<string, unknown>, zone: string): Promise<FrameElement | undefined> {
  if (raw.Kind === 'WindowOpenings') {
    const window = typeof raw.TimeWindow === 'string' ? await loadWindow(tx, raw.TimeWindow, zone) : undefined;
    return window ? { kind: 'WindowOpenings', window } : undefined;
  }
  const unit = FRAME_UNITS.find((u) => u === raw.Unit);
  if (typeof raw.Every !== 'number' || unit === undefined) return undefined;
  const element: FrameElement = {
    kind: 'Every',
    every: raw.Every,
    unit,
    preserveTimes: raw.PreserveTimes !== false,
    startTime: typeof raw.StartTime === 'string' && raw.StartTime !== '' ? raw.StartTime : null,
  };
  if (typeof raw.DuringTimeWindow === 'string' && raw.DuringTimeWindow !== '') {
    const during = await loadWindow(tx, raw.DuringTimeWindow, zone);
    if (during) element.during = during;
  }
  return element;
}

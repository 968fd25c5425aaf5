import { isPlainObject } from '../domain/json.ts';

/**
 * The JSON paths an HTTP job's Out parameters name: `$`, then `.name` and `[index]` steps only (`$.items[0].id`).
 * Hand-written rather than a JSON-path library: this subset is all a definition may declare (the registry checks
 * the pattern), and its whole evaluation is a walk of a few steps. Pure.
 */

const STEP = /\.([A-Za-z_][A-Za-z0-9_]*)|\[(\d+)\]/y;

/** The value at `path`, as the text an Out parameter takes (objects and arrays as JSON); undefined when absent. */
export function readJsonPath(document: unknown, path: string): string | undefined {
  if (!path.startsWith('$')) return undefined;
  let value: unknown = document;
  STEP.lastIndex = 1;
  while (STEP.lastIndex < path.length) {
    const at = STEP.lastIndex;
    const m = STEP.exec(path);
    if (!m || m.index !== at) return undefined;
    if (m[1] !== undefined) {
      if (!isPlainObject(value) || !Object.hasOwn(value, m[1])) return undefined;
      value = value[m[1]];
    } else {
      if (!Array.isArray(value)) return undefined;
      value = value[Number(m[2])];
      if (value === undefined) return undefined;
    }
  }
  if (value === null) return '';
  return typeof value === 'object' ? JSON.stringify(value) : String(value);
}

import { NAME_PATTERN, type TypeName } from './fields.ts';
import type { KeyShape } from './object-type.ts';

export const GLOBAL = 'GLOBAL';

/** A business key taken apart: its canonical text, the partition that governs privileges, and identity values. */
export interface ParsedKey {
  /** Canonical key text, e.g. `GLOBAL.Default` for the input `Default`. */
  readonly key: string;
  /** Partition whose privileges apply to the object. */
  readonly partition: string;
  /** Values of the identity fields, e.g. {Partition: 'GLOBAL', Name: 'Default'}. */
  readonly identity: Readonly<Record<string, string>>;
}

// A `.` inside a name is written %2e in keys, so split first and decode each segment afterwards.
const segment = (s: string): string => s.replace(/%2e/gi, '.');
const validName = (s: string): boolean => NAME_PATTERN.test(s);

/** `<partition>.<name>` or a bare `<name>` (meaning GLOBAL) → [partition, name], or undefined. */
export function parsePartitionedName(text: string): [string, string] | undefined {
  const parts = text.split('.').map(segment);
  const [a, b] = parts;
  if (parts.length === 1 && a !== undefined && validName(a)) return [GLOBAL, a];
  if (parts.length === 2 && a !== undefined && b !== undefined && validName(a) && validName(b)) return [a, b];
  return undefined;
}

/** Parses the key of an object of the given shape; undefined when the text cannot be such a key. */
export function parseKey(shape: KeyShape, text: string): ParsedKey | undefined {
  if (text.length === 0 || text.length > 400) return undefined;
  switch (shape) {
    case 'name':
      return validName(text) ? { key: text, partition: text, identity: { Name: text } } : undefined;
    case 'partitioned': {
      const pn = parsePartitionedName(text);
      if (!pn) return undefined;
      return { key: `${pn[0]}.${pn[1]}`, partition: pn[0], identity: { Partition: pn[0], Name: pn[1] } };
    }
    case 'queueProvider': {
      const parts = text.split('.').map(segment);
      if (parts.length !== 4 || !parts.every(validName)) return undefined;
      const [psp, psn, qp, qn] = parts as [string, string, string, string];
      return {
        key: `${psp}.${psn}.${qp}.${qn}`,
        partition: psp,
        identity: { ProcessServer: `${psp}.${psn}`, Queue: `${qp}.${qn}` },
      };
    }
    case 'numeric':
      return /^[1-9][0-9]{0,15}$/.test(text) ? { key: text, partition: GLOBAL, identity: {} } : undefined;
    case 'eventId':
      return /^[A-Za-z_][A-Za-z0-9_]{0,79}[0-9]+$/.test(text)
        ? { key: text, partition: GLOBAL, identity: {} }
        : undefined;
  }
}

/** The key of a queue provider from its two references. */
export const queueProviderKey = (processServer: string, queue: string): string => `${processServer}.${queue}`;

/** `Type:key`, the form used in messages and the `businessKey` field. */
export const businessKey = (type: TypeName, key: string): string => `${type}:${key}`;

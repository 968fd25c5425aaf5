import { unprocessable } from '../errors.ts';
import type { TypeName } from '../model/fields.ts';
import { parseKey } from '../model/keys.ts';
import type { ObjectType } from '../model/object-type.ts';
import { definitionTypes } from '../model/registry.ts';
import { SIGNATURE_ENTRY } from './signing.ts';

/**
 * Where things live inside a CAR (docs/architecture.md §14): `META-INF/export-info.xml`, an optional
 * `META-INF/MANIFEST.MF` whose name names the import, `META-INF/SIGNATURE.xml` of a signed archive, one
 * `<Type>/<key>.xml` per object, and a library's files as `Library/<key>/<file>` (opaque bytes: a jar inside a
 * CAR is never opened). Pure; any other entry makes the archive unprocessable (422).
 */

export const EXPORT_INFO = 'META-INF/export-info.xml';
export const MANIFEST = 'META-INF/MANIFEST.MF';

export const objectEntryName = (type: TypeName, key: string): string => `${type}/${key}.xml`;
export const libraryEntryName = (library: string, file: string): string => `Library/${library}/${file}`;

export interface CarLayout {
  objects: Array<{ type: TypeName; key: string; entry: string; data: Buffer }>;
  libraryFiles: Array<{ library: string; file: string; data: Buffer }>;
  /** The import's name from the manifest's `Name:` (or `Implementation-Title:`) line, when there is one. */
  manifestName?: string;
}

const TYPES = new Map<string, ObjectType>(definitionTypes().map((t) => [t.name, t]));

/** Sorts an archive's entries into objects and library files; 422 naming the first entry that is neither. */
export function readLayout(entries: ReadonlyArray<{ name: string; data: Buffer }>): CarLayout {
  const layout: CarLayout = { objects: [], libraryFiles: [] };
  for (const { name, data } of entries) {
    if (name === EXPORT_INFO || name === SIGNATURE_ENTRY) continue;
    if (name === MANIFEST) {
      const m = /^(?:Name|Implementation-Title):[ \t]*(.{1,255})$/m.exec(data.toString('utf8'));
      if (m?.[1]) layout.manifestName = m[1].trim();
      continue;
    }
    const parts = name.split('/');
    const type = TYPES.get(parts[0] ?? '');
    if (type && parts.length === 2 && parts[1]?.endsWith('.xml')) {
      const parsed = parseKey(type.key, parts[1].slice(0, -4));
      if (parsed) {
        layout.objects.push({ type: type.name, key: parsed.key, entry: name, data });
        continue;
      }
    }
    if (parts[0] === 'Library' && parts.length === 3 && parts[2] && parseKey('partitioned', parts[1] ?? '')) {
      layout.libraryFiles.push({
        library: parseKey('partitioned', parts[1] ?? '')?.key as string,
        file: parts[2],
        data,
      });
      continue;
    }
    throw unprocessable(
      `The archive holds the unexpected entry "${name}": a CAR holds META-INF/, <Type>/<partition>.<name>.xml and Library/<key>/<file> entries`,
    );
  }
  return layout;
}

/** `META-INF/export-info.xml`. */
export function exportInfoXml(info: {
  sourceSystem: string;
  sourceAddress: string;
  user: string;
  date: string;
}): string {
  const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
  return [
    '<?xml version="1.0" encoding="UTF-8"?>',
    '<export-info>',
    `  <source-system>${esc(info.sourceSystem)}</source-system>`,
    `  <source-address>${esc(info.sourceAddress)}</source-address>`,
    `  <user>${esc(info.user)}</user>`,
    `  <date>${esc(info.date)}</date>`,
    '</export-info>',
    '',
  ].join('\n');
}

import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { type Command, type ConfigFile, type FileValue, OPTIONS } from './options.ts';
import { itemAt } from '../domain/item-at.ts';
import { errorCode } from '../errors.ts';

/**
 * Reads the configuration file (`.toml`, or `.yaml`/`.yml`): a `[serve]` and an `[agent]` section holding options
 * by their key (OPTIONS). Everything in it is checked whichever command reads it, so a typo never waits for the
 * other command to surface: an unknown section or key, or a value of the wrong shape, stops the start with a
 * message naming the key and its line. Values are checked further (ranges, formats) where they are used.
 */
export async function readConfigFile(path: string, command: Command): Promise<ConfigFile> {
  const full = resolve(path);
  let text: string;
  try {
    text = readFileSync(full, 'utf8');
  } catch (err) {
    throw new Error(`cannot read the configuration file ${full}: ${String(errorCode(err) ?? err)}`);
  }
  const entries = /\.ya?ml$/i.test(full) ? await yamlEntries(full, text) : await tomlEntries(full, text);
  const values = new Map<string, FileValue>();
  for (const e of entries) {
    const where = `${full} line ${e.line}`;
    if (e.section !== 'serve' && e.section !== 'agent')
      throw new Error(`${where}: unknown section "${e.section}" (expected serve or agent)`);
    const spec = OPTIONS.find((o) => o.command === e.section && o.key === e.key);
    if (!spec) {
      const known = OPTIONS.filter((o) => o.command === e.section).map((o) => o.key);
      throw new Error(`${where}: unknown key "${e.key}" in [${e.section}] (known: ${known.join(', ')})`);
    }
    let valueText: string;
    const v = e.value;
    if (typeof v === 'string') valueText = v;
    else if ((typeof v === 'number' && Number.isFinite(v)) || typeof v === 'boolean') valueText = String(v);
    else if (spec.list && Array.isArray(v) && v.every((x) => typeof x === 'string' && !x.includes(',')))
      valueText = v.join(',');
    else
      throw new Error(
        `${where}: "${e.key}" must be ${spec.list ? 'a list of strings' : spec.arg ? 'a string or a number' : 'true or false'}`,
      );
    if (e.section === command) values.set(e.key, { text: valueText, line: e.line });
  }
  return { path: full, values };
}

interface Entry {
  section: string;
  key: string;
  value: unknown;
  line: number;
}

async function yamlEntries(path: string, text: string): Promise<Entry[]> {
  const { LineCounter, parseDocument, isMap, isScalar } = await import('yaml');
  const lines = new LineCounter();
  const doc = parseDocument(text, { lineCounter: lines, uniqueKeys: true });
  const lineOf = (offset: number | undefined) => (offset === undefined ? 0 : lines.linePos(offset).line);
  const [e] = doc.errors;
  if (e) {
    throw new Error(`${path} line ${lineOf(e.pos[0])}: ${e.message.split('\n')[0]}`);
  }
  if (doc.contents === null) return [];
  if (!isMap(doc.contents)) throw new Error(`${path}: expected sections serve: and agent:`);
  const entries: Entry[] = [];
  for (const section of doc.contents.items) {
    const name = isScalar(section.key) ? String(section.key.value) : '?';
    const sectionLine = lineOf(isScalar(section.key) ? section.key.range?.[0] : undefined);
    if (section.value === null || (isScalar(section.value) && section.value.value === null)) continue;
    if (!isMap(section.value)) {
      entries.push({ section: name, key: '', value: undefined, line: sectionLine });
      if (name === 'serve' || name === 'agent')
        throw new Error(`${path} line ${sectionLine}: "${name}" must hold keys`);
      continue;
    }
    for (const pair of section.value.items) {
      const key = isScalar(pair.key) ? String(pair.key.value) : '?';
      const node = pair.value as { toJSON?: () => unknown } | null;
      entries.push({
        section: name,
        key,
        value: node && typeof node.toJSON === 'function' ? node.toJSON() : null,
        line: lineOf(isScalar(pair.key) ? pair.key.range?.[0] : undefined),
      });
    }
  }
  return entries;
}

async function tomlEntries(path: string, text: string): Promise<Entry[]> {
  const { parse, TomlError } = await import('smol-toml');
  let doc: Record<string, unknown>;
  try {
    doc = parse(text);
  } catch (err) {
    if (err instanceof TomlError) throw new Error(`${path} line ${err.line}: ${err.message.split('\n')[0]}`);
    throw err;
  }
  const entries: Entry[] = [];
  for (const [section, body] of Object.entries(doc)) {
    if (typeof body !== 'object' || body === null || Array.isArray(body) || body instanceof Date) {
      entries.push({ section, key: '', value: body, line: tomlLine(text, undefined, section) });
      continue;
    }
    for (const [key, value] of Object.entries(body))
      entries.push({ section, key, value, line: tomlLine(text, section, key) });
  }
  return entries;
}

/**
 * The line of `key` in `[section]` (or of a top-level `key`): smol-toml gives values without positions, so the
 * text is scanned for the key's line (bare or quoted key, `section.key = …` dotted form included).
 */
function tomlLine(text: string, section: string | undefined, key: string): number {
  const esc = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  const k = `(?:${esc(key)}|"${esc(key)}"|'${esc(key)}')`;
  const lines = text.split(/\r?\n/);
  let current: string | undefined;
  for (let i = 0; i < lines.length; i++) {
    const line = itemAt(lines, i);
    const header = /^\s*\[\s*["']?([^\]"']+)["']?\s*\]/.exec(line);
    if (header) {
      current = header[1]?.trim();
      continue;
    }
    if (current === section && new RegExp(`^\\s*${k}\\s*=`).test(line)) return i + 1;
    if (
      current === undefined &&
      section !== undefined &&
      new RegExp(`^\\s*${esc(section)}\\s*\\.\\s*${k}\\s*=`).test(line)
    )
      return i + 1;
    if (current === undefined && section === undefined && new RegExp(`^\\s*${k}\\s*=`).test(line)) return i + 1;
  }
  return 0;
}

/**
 * The rules of an event definition's file watches (docs/architecture.md §7b), shared by the registry, the server
 * and the agent: which folders may be named, and what one watch is.
 */

/** One `FileEvents` item as the server sends it to the agent of its process server. */
export interface FileWatch {
  /** `<partition>.<name>` of the event definition the files raise. */
  definition: string;
  directory: string;
  pattern: string;
  pollSeconds: number;
  stableSeconds: number;
  moveDirectory: string | null;
}

/** Why `path` may not be watched or moved into (not absolute, a `..` part), or undefined when it may. */
export function folderProblem(path: string): string | undefined {
  if (!path.startsWith('/')) return 'must be an absolute path (starting with /)';
  if (path.split('/').includes('..')) return 'must not hold a ".." part';
  return undefined;
}

/** Whether `folder` is `root` or inside it (both absolute, without `..`; a trailing slash is ignored). */
export function isInside(folder: string, root: string): boolean {
  const f = trimmed(folder);
  const r = trimmed(root);
  return r === '' || f === r || f.startsWith(`${r}/`);
}

const trimmed = (path: string): string => path.replace(/\/+$/, '');

/** The watches of one process server among the `FileEvents` of every event definition, Enabled ones only. */
export function watchesOf(
  processServer: string,
  definitions: ReadonlyArray<{ key: string; data: Record<string, unknown> }>,
): FileWatch[] {
  const out: FileWatch[] = [];
  for (const d of definitions) {
    const items: Array<Record<string, unknown>> = Array.isArray(d.data.FileEvents) ? d.data.FileEvents : [];
    for (const f of items) {
      if (f.ProcessServer !== processServer || f.Enabled === false) continue;
      out.push({
        definition: d.key,
        directory: String(f.Directory),
        pattern: typeof f.Pattern === 'string' && f.Pattern !== '' ? f.Pattern : '*',
        pollSeconds: typeof f.PollSeconds === 'number' ? f.PollSeconds : 10,
        stableSeconds: typeof f.StableSeconds === 'number' ? f.StableSeconds : 5,
        moveDirectory: typeof f.MoveDirectory === 'string' && f.MoveDirectory !== '' ? f.MoveDirectory : null,
      });
    }
  }
  return out;
}

/** The key a watch is known by in the agent's status reports: its definition and folder. */
export const watchId = (w: Pick<FileWatch, 'definition' | 'directory' | 'pattern'>): string =>
  `${w.definition} ${w.directory} ${w.pattern}`;

/**
 * Which files of a folder have become stable (docs/architecture.md §7b): a file counts once its size and
 * modification time (and inode: a file replaced under the same name starts again) have stayed the same for
 * `stableMs`, measured from the first look that saw them so. Pure: the watcher gives it what it read and when.
 */
export interface Sighting {
  name: string;
  size: number;
  mtime: number;
  inode: string;
}

interface Candidate extends Sighting {
  since: number;
}

export class StableFiles {
  private readonly candidates = new Map<string, Candidate>();

  /**
   * One look at the folder at `now`: the files seen (already filtered by pattern), and those now stable, which are
   * forgotten (the caller raises them and remembers them by identity). A file gone from the folder is forgotten.
   */
  look(seen: readonly Sighting[], now: number, stableMs: number): Sighting[] {
    const stable: Sighting[] = [];
    const present = new Set<string>();
    for (const s of seen) {
      present.add(s.name);
      const c = this.candidates.get(s.name);
      const same = c !== undefined && c.size === s.size && c.mtime === s.mtime && c.inode === s.inode;
      const since = same ? c.since : now;
      if (now - since >= stableMs) {
        stable.push(s);
        this.candidates.delete(s.name);
      } else if (!same) this.candidates.set(s.name, { ...s, since });
    }
    for (const name of this.candidates.keys()) if (!present.has(name)) this.candidates.delete(name);
    return stable;
  }
}

/** The key of one file identity: what the server refuses to raise twice. */
export const identityId = (definition: string, path: string, s: Omit<Sighting, 'name'>): string =>
  JSON.stringify([definition, path, s.size, s.mtime, s.inode]);

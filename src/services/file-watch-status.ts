import { watchesOf } from '../domain/file-watch.ts';
import { parseKey } from '../model/keys.ts';
import { requireType } from '../model/registry.ts';
import type { Principal } from '../security/privileges.ts';
import { listAllObjects } from '../store/all-objects.ts';
import type { Store } from '../store/store.ts';
import { formatInstant } from '../time/date-format.ts';
import type { ObjectService } from './objects.ts';

/** One watch of a process server, as `GET /ProcessServer/<key>/filewatches` shows it. */
export interface FileWatchView {
  EventDefinition: string;
  Directory: string;
  Pattern: string;
  /** When the agent last read the folder; null before its first look (or with no agent connected yet). */
  LastPoll: string | null;
  /** Files the agent counted stable and raised (or tried to) since it started. */
  FilesSeen: number;
  /** Why the last look failed (a folder outside --watch-root, missing, unreadable, a file that could not move). */
  LastError: string | null;
}

/**
 * `GET /ProcessServer/<key>/filewatches` (docs/architecture.md §7b): the enabled file watches of the event
 * definitions naming the process server, each with what its agent last reported of it. Read as GET reads the
 * process server (404 unless the caller may view it).
 */
export class FileWatchStatus {
  private readonly deps: { store: Store; objects: ObjectService; defaultTimeZone: string };

  constructor(deps: { store: Store; objects: ObjectService; defaultTimeZone: string }) {
    this.deps = deps;
  }

  async list(principal: Principal, pathKey: string): Promise<{ items: FileWatchView[] }> {
    const type = requireType('ProcessServer');
    await this.deps.objects.getText(principal, type, pathKey);
    const key = parseKey(type.key, pathKey)?.key ?? pathKey;
    const { store, defaultTimeZone } = this.deps;
    const watches = watchesOf(key, await listAllObjects(store, 'EventDefinition'));
    const stored = await store.fileWatches.status(key);
    const reported: Array<Record<string, unknown>> = stored ? JSON.parse(stored.data) : [];
    const items = watches.map((w) => {
      const r = reported.find(
        (x) => x.definition === w.definition && x.directory === w.directory && x.pattern === w.pattern,
      );
      const lastPoll = typeof r?.lastPoll === 'number' ? formatInstant(r.lastPoll, defaultTimeZone) : null;
      return {
        EventDefinition: w.definition,
        Directory: w.directory,
        Pattern: w.pattern,
        LastPoll: lastPoll,
        FilesSeen: typeof r?.filesSeen === 'number' ? r.filesSeen : 0,
        LastError: typeof r?.lastError === 'string' ? r.lastError : null,
      };
    });
    return { items };
  }
}

/**
 * What the server keeps of file events (migration 0016, docs/architecture.md §7b): the file identities already
 * raised, and each process server's watch status as its agent last reported it.
 */

/** One file as the agent saw it when it became stable. */
export interface FileIdentity {
  definition: string;
  processServer: string;
  path: string;
  size: number;
  mtime: number;
  inode: string;
}

export interface FileWatchStore {
  /**
   * Records the file as raised at `now`; false when it was recorded before (a duplicate, which
   * must not raise again). Inside a transaction, part of it: the raise and its record commit together.
   */
  claim(file: FileIdentity, now: number): Promise<boolean>;
  /** Stores a process server's watch status (JSON text) as reported at `now`. */
  saveStatus(processServer: string, data: string, now: number): Promise<void>;
  /** The stored watch status of a process server and when it was reported, or undefined. */
  status(processServer: string): Promise<{ data: string; updatedAt: number } | undefined>;
  /** Forgets the files raised for a definition (it is being deleted with its events). */
  deleteOfDefinition(definition: string): Promise<void>;
}

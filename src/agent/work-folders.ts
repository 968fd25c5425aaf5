import { randomBytes } from 'node:crypto';
import { type Dirent, lstatSync, mkdirSync, readdirSync, renameSync, type Stats, truncateSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { errorCode } from '../errors.ts';
import { removeWorkFolder, type WorkPaths } from './scripts.ts';

/** Spare folders kept at most: a few more than the jobs an agent usually runs at once. */
const MAX_SPARES = 16;

/**
 * Work folders of attempts (docs/architecture.md §7), kept for the next attempt instead of deleted and made again.
 * On an ext4 without a journal, allocating an inode looks past every recently freed inode (which it will not
 * reuse yet), so creating and deleting the four inodes of each job was most of the agent's kernel time
 * (bench/README.md, B2). A finished attempt's folder becomes a spare (renamed, its logs emptied) only when nothing
 * can write to it any more, as far as the agent can tell: its process group has no process left, and it holds
 * exactly what the agent made (the two logs, an empty `files/`) with the modes and link counts it made them with.
 * Anything else is deleted as before. A process that left the job's process group (`setsid`, job control) is beyond
 * this check, as it is beyond a kill. Spares are named `.spare-*` in the work root, which the agent empties of
 * everything but its spooled attempts when it starts.
 */
export class WorkFolders {
  private readonly root: string;
  private readonly spares: string[] = [];
  private readonly prefix = `.spare-${randomBytes(4).toString('hex')}-`;
  private made = 0;
  /** The mode the agent's folders get (0777 less the umask), read from the first one it makes. */
  private folderMode: number | undefined;

  constructor(root: string) {
    this.root = root;
  }

  /** Spare folders held now. */
  get spareCount(): number {
    return this.spares.length;
  }

  /**
   * Makes the attempt's folder with an empty `files/`: a spare renamed into place (its logs are empty; the caller
   * opens them with truncation all the same), or new folders.
   */
  prepare(paths: WorkPaths): void {
    const spare = this.spares.pop();
    if (spare !== undefined) {
      try {
        renameSync(spare, paths.dir);
        return;
      } catch {
        // the folder exists already with something in it, or the spare was deleted: made anew below
        void rm(spare, { recursive: true, force: true }).catch(() => {});
      }
    }
    mkdirSync(paths.files, { recursive: true });
    this.folderMode ??= lstatSync(paths.files).mode & 0o7777;
  }

  /**
   * Once an attempt is done with (acknowledged or abandoned): its folder becomes a spare when `group` (the process
   * group its process led, undefined for what ran in the agent or was started by an earlier agent) has no process
   * left and the folder is the usual one; otherwise it is deleted.
   */
  async release(paths: WorkPaths, group: number | undefined): Promise<void> {
    if (group !== undefined && this.spares.length < MAX_SPARES && groupGone(group) && this.keep(paths)) {
      const spare = join(this.root, `${this.prefix}${this.made++}`);
      try {
        renameSync(paths.dir, spare);
        this.spares.push(spare);
        return;
      } catch {
        // deleted below
      }
    }
    await removeWorkFolder(paths);
  }

  /** True when the folder holds exactly what the agent made, untouched but for the logs' content, now emptied. */
  private keep(paths: WorkPaths): boolean {
    const mode = this.folderMode;
    if (mode === undefined) return false;
    try {
      if (!usualEntries(readdirSync(paths.dir, { withFileTypes: true }))) return false;
      if (readdirSync(paths.files).length > 0) return false;
      const logMode = 0o644 & mode;
      // Link counts: a folder with one subfolder has 3, one without 2; a log linked elsewhere would have 2.
      const dir = lstatSync(paths.dir);
      const files = lstatSync(paths.files);
      const stdout = lstatSync(paths.stdout);
      const stderr = lstatSync(paths.stderr);
      if (!asMade(dir, mode, 3) || !asMade(files, mode, 2)) return false;
      if (!asMade(stdout, logMode, 1) || !asMade(stderr, logMode, 1)) return false;
      if (stdout.size > 0) truncateSync(paths.stdout);
      if (stderr.size > 0) truncateSync(paths.stderr);
      return true;
    } catch {
      return false;
    }
  }
}

const USUAL = new Map([
  ['stdout.log', 'file'],
  ['stderr.log', 'file'],
  ['files', 'dir'],
]);

function usualEntries(entries: Dirent[]): boolean {
  if (entries.length !== USUAL.size) return false;
  return entries.every((e) => USUAL.get(e.name) === (e.isFile() ? 'file' : e.isDirectory() ? 'dir' : 'other'));
}

const ownUid = process.getuid?.();

function asMade(st: Stats, mode: number, links: number): boolean {
  return (st.mode & 0o7777) === mode && st.nlink === links && (ownUid === undefined || st.uid === ownUid);
}

/** True when no process is left in the group (a signal 0 finds none); any other answer keeps the folder from reuse. */
export function groupGone(group: number): boolean {
  try {
    process.kill(-group, 0);
    return false;
  } catch (err) {
    return errorCode(err) === 'ESRCH';
  }
}

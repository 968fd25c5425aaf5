import { createHash } from 'node:crypto';
import { mkdirSync, renameSync, rmSync, type Stats, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** Distinct script texts remembered; past this the least recently used file goes. */
const MAX_SCRIPTS = 5000;

/**
 * BASH and SH script files shared by content (docs/architecture.md §7): a text is written once, read-only, to
 * `<agent data>/scripts/<sha256>.<ext>`, and every attempt running that text runs that file. Creating and deleting
 * a file per job was most of the agent's cost on some file systems (bench/README.md, B2).
 *
 * Before each use the file is compared with what was written (inode, size, modification time, mode): one a job
 * changed or removed is written anew beside it and renamed into place, so a job already reading the old one keeps
 * it and the next one gets the server's text.
 */
export class ScriptFiles {
  private readonly dir: string;
  /** What was written, by file, least recently used first. */
  private readonly written = new Map<string, Stats>();
  private seq = 0;

  constructor(dir: string) {
    this.dir = dir;
  }

  /**
   * Empties the folder. At the agent's start: an attempt of an earlier agent process has opened its script long
   * before (and keeps it open while it reads it), and its outcome is reported lost anyway.
   */
  sweep(): void {
    rmSync(this.dir, { recursive: true, force: true });
    mkdirSync(this.dir, { recursive: true });
  }

  /** The file holding `text`, written now unless an intact one exists. */
  fileFor(text: string, extension: string): string {
    const file = join(this.dir, `${createHash('sha256').update(text).digest('hex')}.${extension}`);
    const known = this.written.get(file);
    if (known) {
      this.written.delete(file);
      if (intact(file, known)) {
        this.written.set(file, known);
        return file;
      }
    }
    this.written.set(file, this.write(file, text));
    if (this.written.size > MAX_SCRIPTS) {
      const [oldest] = this.written.keys();
      if (oldest !== undefined) {
        this.written.delete(oldest);
        rmSync(oldest, { force: true });
      }
    }
    return file;
  }

  private write(file: string, text: string): Stats {
    const temporary = join(this.dir, `.${process.pid}.${++this.seq}.tmp`);
    try {
      writeFileSync(temporary, text, { mode: 0o400 });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
      // The folder was removed under the agent.
      mkdirSync(this.dir, { recursive: true });
      writeFileSync(temporary, text, { mode: 0o400 });
    }
    renameSync(temporary, file);
    return statSync(file);
  }
}

function intact(file: string, known: Stats): boolean {
  const now = statSync(file, { throwIfNoEntry: false });
  return (
    now !== undefined &&
    now.ino === known.ino &&
    now.size === known.size &&
    now.mtimeMs === known.mtimeMs &&
    now.ctimeMs === known.ctimeMs &&
    now.mode === known.mode
  );
}

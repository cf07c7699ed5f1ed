import { randomUUID } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { spoolDirectory } from './spool-directory.js';

/** The spool file could not be written (the temporary directory is missing, full or read-only). */
export class SpoolError extends Error {}

/**
 * An upload's bytes on disk, in this process's spool directory (spool-directory.ts), mode 0600. The file is
 * written as its parts arrive and read by the extraction worker from there: the service never holds a
 * 10 MB file whole (nor copies it into one Buffer, which held the event loop for tens of ms), and the
 * worker gets a path rather than a 10 MB IPC message, whose serialization held it for 90-120 ms.
 */
export class SpoolFile {
  readonly path = join(spoolDirectory(), `kqs-upload-${randomUUID()}`);
  private writing: Promise<unknown> = Promise.resolve();

  /**
   * Streams `content` into the file; its size in bytes. A failure of the file itself (the directory
   * missing, full or read-only) is a SpoolError; one of the content (a multipart body cut short, or
   * over a limit) passes through as it is.
   */
  async write(content: Readable): Promise<number> {
    const file = createWriteStream(this.path, { mode: 0o600 });
    let fileFailed: NodeJS.ErrnoException | undefined;
    // Only the file system's own errors carry a syscall: pipeline also destroys the file with the
    // content's error.
    file.once('error', (error: NodeJS.ErrnoException) => (fileFailed = error.syscall ? error : undefined));
    const written = pipeline(content, file);
    this.writing = written.catch(() => undefined);
    try {
      await written;
    } catch (error) {
      throw fileFailed ? new SpoolError(fileFailed.message) : error;
    }
    return file.bytesWritten;
  }

  /** Removes the file, once a write still under way has stopped (it could otherwise create it after). */
  async remove(): Promise<void> {
    await this.writing;
    await rm(this.path, { force: true });
  }
}

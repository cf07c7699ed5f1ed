import { Inject, Injectable } from '@nestjs/common';
import { UploadsBusyError } from '../common/errors.js';
import { APP_CONFIG } from '../config/config.module.js';
import type { AppConfig } from '../config/env.schema.js';

/**
 * Bounds the uploads this instance holds at once (the file in the spool directory, its text and
 * chunks in memory: tens of MB each at the limit). Refusing the next one with a 503 before its body is
 * read keeps memory and disk bounded; queueing it would not, since its body would still be arriving.
 */
@Injectable()
export class UploadGate {
  private inFlight = 0;

  constructor(@Inject(APP_CONFIG) private readonly config: AppConfig) {}

  /** Places taken now. */
  get held(): number {
    return this.inFlight;
  }

  /** Takes a place, or throws a 503 when none is free; call the returned function once done. */
  enter(): () => void {
    const leave = this.tryEnter();
    if (!leave) throw new UploadsBusyError(this.config.MAX_UPLOADS_IN_FLIGHT);
    return leave;
  }

  /** Takes a place, or null when none is free (a queued job waits for the next one rather than failing). */
  tryEnter(): (() => void) | null {
    if (this.inFlight >= this.config.MAX_UPLOADS_IN_FLIGHT) return null;
    this.inFlight++;
    let released = false;
    return () => {
      if (!released) this.inFlight--;
      released = true;
    };
  }
}

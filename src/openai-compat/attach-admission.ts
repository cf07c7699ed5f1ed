import { Injectable } from '@nestjs/common';
import { AttachWritesBusyError } from '../common/errors.js';

/** An organization's attach-side writes running at once on one instance. */
export const ATTACH_WRITES_AT_ONCE = 2;
/** And waiting for their turn (beyond: 429). */
export const ATTACH_WRITES_WAITING = 100;

/**
 * Bounds the writes that take an organization's `files_usage` row (an attach, a detach, a file's
 * deletion, a store created with its files) to a few at once per organization on this instance. They run
 * one after another in the database anyway, holding that row; without this bound a burst of 1,000
 * attaches held 1,000 pooled connections waiting for it, and other organizations' requests found no
 * connection (503). Waiting here costs no connection.
 */
@Injectable()
export class AttachAdmission {
  private readonly organizations = new Map<string, { running: number; waiting: (() => void)[] }>();

  async run<T>(organizationId: string, write: () => Promise<T>): Promise<T> {
    let turn = this.organizations.get(organizationId);
    if (!turn) {
      turn = { running: 0, waiting: [] };
      this.organizations.set(organizationId, turn);
    }
    if (turn.running < ATTACH_WRITES_AT_ONCE) turn.running++;
    else if (turn.waiting.length >= ATTACH_WRITES_WAITING) throw new AttachWritesBusyError(ATTACH_WRITES_WAITING);
    else {
      const queue = turn.waiting;
      await new Promise<void>((resolve) => queue.push(resolve));
    }
    try {
      return await write();
    } finally {
      // The place goes to the next waiting write, if any (the running count stays).
      const next = turn.waiting.shift();
      if (next) next();
      else if (--turn.running === 0) this.organizations.delete(organizationId);
    }
  }
}

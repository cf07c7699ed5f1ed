import { Injectable } from '@nestjs/common';

/** Set when SIGTERM arrives, so readiness turns 503 while in-flight requests finish. */
@Injectable()
export class ShutdownState {
  draining = false;
}

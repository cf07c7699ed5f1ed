/** At most `limit` tasks at once; the others wait in order of arrival. */
export class Semaphore {
  private active = 0;
  private readonly waiting: (() => void)[] = [];

  constructor(private readonly limit: number) {}

  get queued(): number {
    return this.waiting.length;
  }

  async run<T>(task: () => Promise<T>): Promise<T> {
    if (this.active >= this.limit) await new Promise<void>((resolve) => this.waiting.push(resolve));
    else this.active++;
    try {
      return await task();
    } finally {
      // Hand the slot straight to the next waiter (active stays the same), or free it.
      const next = this.waiting.shift();
      if (next) next();
      else this.active--;
    }
  }
}

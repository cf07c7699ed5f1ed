interface Pending<I, O> {
  item: I;
  resolve: (value: O) => void;
  reject: (error: unknown) => void;
}

/**
 * Group commit for writes that contend on one row, batched by a key naming that row. Every document
 * added to a corpus updates that corpus's statistics rows (key: the corpus id), and every metered
 * request updates its organization's subscription row (key: the organization and the price), so such
 * writes run one after another, each holding the row through its commit; alone, that caps them at a
 * few hundred a second. Here a write that arrives while its key is busy waits for the current
 * transaction and then goes out together with the others that waited: one transaction, one commit.
 * A lone write goes out at once, so nothing waits on a timer.
 *
 * If a batch fails, its items are retried one by one, so each caller gets its own outcome.
 */
export class KeyedBatcher<I, O> {
  private readonly queues = new Map<string, Pending<I, O>[]>();

  constructor(
    private readonly write: (items: I[]) => Promise<O[]>,
    private readonly limits: { maxItems: number; maxWeight: number; weight: (item: I) => number },
  ) {}

  submit(key: string, item: I): Promise<O> {
    return new Promise<O>((resolve, reject) => {
      const queue = this.queues.get(key);
      if (queue) {
        queue.push({ item, resolve, reject });
        return;
      }
      const fresh = [{ item, resolve, reject }];
      this.queues.set(key, fresh);
      void this.drain(key, fresh);
    });
  }

  private async drain(key: string, queue: Pending<I, O>[]): Promise<void> {
    while (queue.length > 0) {
      const batch = this.take(queue);
      try {
        const results = await this.write(batch.map((pending) => pending.item));
        batch.forEach((pending, i) => pending.resolve(results[i]));
      } catch (error) {
        if (batch.length === 1) batch[0].reject(error);
        else
          for (const pending of batch)
            await this.write([pending.item]).then(([result]) => pending.resolve(result), pending.reject);
      }
    }
    this.queues.delete(key);
  }

  private take(queue: Pending<I, O>[]): Pending<I, O>[] {
    let count = 1;
    let weight = this.limits.weight(queue[0].item);
    while (count < queue.length && count < this.limits.maxItems) {
      weight += this.limits.weight(queue[count].item);
      if (weight > this.limits.maxWeight) break;
      count++;
    }
    return queue.splice(0, count);
  }
}

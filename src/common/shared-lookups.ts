/**
 * Cache-miss lookups under way, by key: the callers that miss the same entry meanwhile share one. When
 * a cached credential or role expired, every request of a busy client in flight missed it at once, and
 * each sent its own query: a flooding tenant's twelve connections took the whole pool for 20–50 ms and
 * another tenant's reads queued behind them. Shared only while nothing was invalidated since the lookup
 * started (the caches' `generation`): a caller after a revocation or a role change must not get an
 * answer read before it.
 */
export class SharedLookups<K, V> {
  private readonly pending = new Map<K, { generation: number; result: Promise<V> }>();

  run(key: K, generation: number, lookup: () => Promise<V>): Promise<V> {
    const under = this.pending.get(key);
    if (under?.generation === generation) return under.result;
    const entry = { generation, result: lookup() };
    this.pending.set(key, entry);
    void entry.result
      .finally(() => {
        if (this.pending.get(key) === entry) this.pending.delete(key);
      })
      .catch(() => undefined);
    return entry.result;
  }
}

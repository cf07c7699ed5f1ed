import { Semaphore } from '../../src/auth/semaphore.js';

describe('Semaphore (bounds argon2 hashing)', () => {
  it('runs at most `limit` tasks at once, the others in order of arrival', async () => {
    const slots = new Semaphore(2);
    let running = 0;
    let most = 0;
    const order: number[] = [];
    const task = (n: number) => async () => {
      running++;
      most = Math.max(most, running);
      await new Promise((resolve) => setTimeout(resolve, 5));
      order.push(n);
      running--;
      return n;
    };
    const results = await Promise.all(Array.from({ length: 10 }, (_, n) => slots.run(task(n))));
    expect(results).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    expect(most).toBe(2);
    expect(order.slice(2)).toEqual([2, 3, 4, 5, 6, 7, 8, 9]);
    expect(slots.queued).toBe(0);
  });

  it('frees the slot of a task that fails', async () => {
    const slots = new Semaphore(1);
    await expect(slots.run(() => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
    await expect(slots.run(() => Promise.resolve('next'))).resolves.toBe('next');
  });
});

import { openWithin } from '../../src/database/database.module.js';

describe('openWithin (readiness connection at boot)', () => {
  it('tries again after a failed attempt while the time allowed lasts, and answers what opened', async () => {
    let clock = 0;
    let attempts = 0;
    const open = () => {
      attempts++;
      clock += 2_000; // each attempt times out after the ping's two seconds
      return attempts < 3
        ? Promise.reject(new Error('timeout exceeded when trying to connect'))
        : Promise.resolve('open');
    };
    await expect(openWithin(open, 15_000, () => clock)).resolves.toBe('open');
    expect(attempts).toBe(3);
  });

  it('gives up with the last error once the time allowed has passed', async () => {
    let clock = 0;
    let attempts = 0;
    const open = () => {
      attempts++;
      clock += 2_000;
      return Promise.reject(new Error(`attempt ${attempts} timed out`));
    };
    await expect(openWithin(open, 3_000, () => clock)).rejects.toThrow('attempt 2 timed out');
    expect(attempts).toBe(2);
  });
});

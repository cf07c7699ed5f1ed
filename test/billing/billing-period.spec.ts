import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { transformSync } from '@swc/core';
import { periodBounds, toIsoSeconds } from '../../src/billing/billing-period.js';

describe('billing periods (calendar months in UTC)', () => {
  it.each([
    ['2026-01-01', '2026-01-01T00:00:00Z', '2026-02-01T00:00:00Z'],
    ['2026-02-01', '2026-02-01T00:00:00Z', '2026-03-01T00:00:00Z'], // 28 days
    ['2024-02-01', '2024-02-01T00:00:00Z', '2024-03-01T00:00:00Z'], // leap year, 29 days
    ['2000-02-01', '2000-02-01T00:00:00Z', '2000-03-01T00:00:00Z'], // divisible by 400: leap
    ['2100-02-01', '2100-02-01T00:00:00Z', '2100-03-01T00:00:00Z'], // divisible by 100: not leap
    ['2026-04-01', '2026-04-01T00:00:00Z', '2026-05-01T00:00:00Z'], // 30 days
    ['2026-12-01', '2026-12-01T00:00:00Z', '2027-01-01T00:00:00Z'], // year wrap
    ['2026-03-01', '2026-03-01T00:00:00Z', '2026-04-01T00:00:00Z'], // European DST starts in March
    ['2026-10-01', '2026-10-01T00:00:00Z', '2026-11-01T00:00:00Z'], // ...and ends in October
  ])('the period starting %s runs from %s to %s', (periodStart, start, end) => {
    const bounds = periodBounds(periodStart);
    expect(toIsoSeconds(bounds.start)).toBe(start);
    expect(toIsoSeconds(bounds.end)).toBe(end);
  });

  it('ends a period that starts on the 31st at the start of the next month, not a month later', () => {
    // Adding a month to 31 January would give 3 March; a period always ends on the next month's 1st.
    expect(toIsoSeconds(periodBounds('2026-01-31').end)).toBe('2026-02-01T00:00:00Z');
    expect(toIsoSeconds(periodBounds('2026-03-31').end)).toBe('2026-04-01T00:00:00Z');
  });

  it('lasts as many days as the month has', () => {
    const days = (periodStart: string) => {
      const { start, end } = periodBounds(periodStart);
      return (end.getTime() - start.getTime()) / 86_400_000;
    };
    expect([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12].map((m) => days(`2023-${String(m).padStart(2, '0')}-01`))).toEqual([
      31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31,
    ]);
    expect(days('2024-02-01')).toBe(29);
  });

  // Jest's sandbox cannot change the process time zone, so the module runs in a child process per zone.
  it.each(['UTC', 'Pacific/Kiritimati', 'America/Los_Angeles', 'Australia/Lord_Howe'])(
    'gives the same bounds with TZ=%s',
    (zone) => {
      const { code } = transformSync(
        readFileSync(new URL('../../src/billing/billing-period.ts', import.meta.url), 'utf8'),
        {
          jsc: { parser: { syntax: 'typescript' }, target: 'es2022' },
        },
      );
      const probe = `${code}\nconst { start, end } = periodBounds('2026-12-01');
      console.log(JSON.stringify([start, end, new Date(2026, 0, 1).getTimezoneOffset()]));`;
      const child = spawnSync(process.execPath, ['--input-type=module', '-e', probe], {
        env: { PATH: process.env.PATH, TZ: zone },
        encoding: 'utf8',
      });
      expect(child.stderr).toBe('');
      const [start, end, offset] = JSON.parse(child.stdout) as [string, string, number];
      expect([start, end]).toEqual(['2026-12-01T00:00:00.000Z', '2027-01-01T00:00:00.000Z']);
      if (zone !== 'UTC') expect(offset).not.toBe(0); // the zone really applied
    },
  );

  it('writes timestamps in ISO 8601 UTC to the second, dropping milliseconds', () => {
    expect(toIsoSeconds(new Date('2026-05-17T08:09:10.999Z'))).toBe('2026-05-17T08:09:10Z');
    expect(toIsoSeconds(new Date('2026-05-17T08:09:10.000Z'))).toBe('2026-05-17T08:09:10Z');
    expect(toIsoSeconds(new Date(Date.UTC(2026, 11, 31, 23, 59, 59, 500)))).toBe('2026-12-31T23:59:59Z');
  });
});

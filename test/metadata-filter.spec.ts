import { compileMetadataFilter, metadataFilterProblem, parseMetadataFilter } from '../src/retrieval/metadata-filter.js';

describe('metadata filter checking', () => {
  it('accepts values, every operator, and no filter at all', () => {
    const filter = {
      source: 'wiki',
      year: 2024,
      a: { $eq: 'x', $ne: 'y' },
      b: { $in: [1, 2], $nin: [3] },
      c: { $gt: 1, $gte: 2, $lt: 10, $lte: 9.5 },
      d: { $gt: 'a', $lt: 'n' },
      e: { $exists: true },
      f: { $exists: false },
      g: { $in: [] },
    };
    expect(metadataFilterProblem(filter)).toBeNull();
    expect(parseMetadataFilter(filter)).toBe(filter);
    expect(parseMetadataFilter(undefined)).toBeUndefined();
    expect(parseMetadataFilter(null)).toBeUndefined();
    expect(parseMetadataFilter({})).toBeUndefined();
  });

  it.each([
    [[], 'Must be an object of metadata fields, e.g. {"year": 2024}.'],
    ['year', 'Must be an object of metadata fields, e.g. {"year": 2024}.'],
    [{ year: { $foo: 1 } }, '"year": Unknown operator "$foo"; use $eq, $ne, $in, $nin, $gt, $gte, $lt, $lte, $exists.'],
    [{ year: {} }, '"year": Give at least one operator ($eq, $ne, $in, $nin, $gt, $gte, $lt, $lte, $exists).'],
    [
      { author: { name: 'Ada' } },
      '"author": Nested objects are not supported: "name" is not an operator ($eq, $ne, $in, $nin, $gt, $gte, $lt, $lte, $exists).',
    ],
    [{ year: { $eq: { $gt: 1 } } }, '"year": $eq must be a string or a number.'],
    [{ year: [2024] }, '"year": A value must be a string or a number (or an object of operators).'],
    [{ year: null }, '"year": A value must be a string or a number (or an object of operators).'],
    [{ draft: true }, '"draft": A value must be a string or a number (or an object of operators).'],
    [{ year: { $in: 2024 } }, '"year": $in must be a list of at most 100 values.'],
    [{ year: { $nin: 'x' } }, '"year": $nin must be a list of at most 100 values.'],
    [{ year: { $in: Array.from({ length: 101 }, (_, i) => i) } }, '"year": $in must be a list of at most 100 values.'],
    [{ year: { $in: [1, null] } }, '"year": $in values must be strings or numbers.'],
    [{ year: { $in: [1, [2]] } }, '"year": $in values must be strings or numbers.'],
    [{ year: { $gt: 2020, $lt: '2025' } }, '"year": Numbers cannot be compared with strings: use one type per field.'],
    [{ year: { $in: [2020, '2021'] } }, '"year": Numbers cannot be compared with strings: use one type per field.'],
    [{ year: { $gt: true } }, '"year": $gt must be a string or a number.'],
    [{ year: { $exists: 1 } }, '"year": $exists must be true or false.'],
    [{ '': 1 }, '"": Field names are 1 to 100 characters long.'],
    // The name is echoed clipped to 64 characters.
    [{ ['k'.repeat(101)]: 1 }, `"${'k'.repeat(64)}…": Field names are 1 to 100 characters long.`],
    [{ title: 'x'.repeat(1001) }, '"title": Strings are at most 1000 characters, without null characters.'],
    [
      Object.fromEntries(Array.from({ length: 21 }, (_, i) => [`f${i}`, i])),
      'Ensure this object has no more than 20 fields.',
    ],
  ])('rejects %j', (filter, problem) => {
    expect(metadataFilterProblem(filter)).toBe(problem);
  });

  it('takes exactly 20 fields and lists of exactly 100 values', () => {
    expect(metadataFilterProblem(Object.fromEntries(Array.from({ length: 20 }, (_, i) => [`f${i}`, i])))).toBeNull();
    expect(metadataFilterProblem({ n: { $nin: Array.from({ length: 100 }, (_, i) => `v${i}`) } })).toBeNull();
  });
});

describe('metadata filter compiling', () => {
  const compile = (filter: Parameters<typeof compileMetadataFilter>[0]) =>
    compileMetadataFilter(filter, 'd.metadata', 10);

  it('turns a value into a containment test, numbering placeholders from the first given', () => {
    expect(compile({ source: 'wiki', year: 2024 })).toEqual({
      sql: 'd.metadata @> $10::jsonb AND d.metadata @> $11::jsonb',
      params: ['{"source":"wiki"}', '{"year":2024}'],
    });
  });

  it('lets a missing field match only $ne, $nin and $exists: false', () => {
    expect(compile({ a: { $ne: 'x' }, b: { $nin: [1, 2] }, c: { $exists: false } })).toEqual({
      sql: 'NOT (d.metadata @> $10::jsonb) AND NOT (d.metadata @> ANY($11::jsonb[])) AND NOT (d.metadata ? $12::text)',
      params: ['{"a":"x"}', ['{"b":1}', '{"b":2}'], 'c'],
    });
    expect(compile({ a: { $eq: 'x' }, b: { $in: ['p'] }, c: { $exists: true } }).sql).toBe(
      'd.metadata @> $10::jsonb AND d.metadata @> ANY($11::jsonb[]) AND (d.metadata ? $12::text)',
    );
  });

  it('compares ranges only with values of the filter’s own type', () => {
    expect(compile({ year: { $gte: 2020, $lt: 2025 } })).toEqual({
      sql:
        '(jsonb_typeof(d.metadata -> $10::text) = $11::text AND d.metadata -> $10::text >= $12::jsonb)' +
        ' AND (jsonb_typeof(d.metadata -> $13::text) = $14::text AND d.metadata -> $13::text < $15::jsonb)',
      params: ['year', 'number', '2020', 'year', 'number', '2025'],
    });
    expect(compile({ name: { $gt: 'm' } }).params).toEqual(['name', 'string', '"m"']);
  });

  it('never puts client text into the SQL, however it is spelt', () => {
    const hostile = "x'); DROP TABLE documents; --";
    const compiled = compile({ [hostile]: { $gt: hostile, $ne: hostile, $exists: true } });
    expect(compiled.sql).not.toContain('DROP');
    expect(compiled.params).toContain(hostile);
  });

  it('matches everything when the filter has no fields', () => {
    expect(compile({})).toEqual({ sql: 'true', params: [] });
  });
});

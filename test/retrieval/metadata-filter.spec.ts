import {
  compileMetadataFilter,
  CompoundFilter,
  type MetadataFilter,
  metadataFilterProblem,
  parseMetadataFilter,
} from '../../src/retrieval/metadata-filter.js';

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
  const compile = (filter: MetadataFilter) => compileMetadataFilter(filter, 'm.metadata', 'v', 't', 10);

  it('reads each field once, as a number or a string by the filter’s type, numbering placeholders from the first given', () => {
    expect(compile({ source: 'wiki', year: 2024 })).toEqual({
      fields: 'm.metadata -> $10::text AS v0, m.metadata -> $12::text AS v1',
      typed:
        "CASE WHEN jsonb_typeof(v.v0) = 'string' THEN v.v0 #>> '{}' END AS t0, " +
        "CASE WHEN jsonb_typeof(v.v1) = 'number' THEN v.v1::numeric END AS t1",
      sql: 't.t0 = $11::text AND t.t1 = $13::numeric',
      params: ['source', 'wiki', 'year', 2024],
    });
  });

  it('lets a missing field (NULL) match only $ne, $nin and $exists: false', () => {
    const compiled = compile({ a: { $ne: 'x' }, b: { $nin: [1, 2] }, c: { $exists: false } });
    expect(compiled.sql).toBe(
      't.t0 IS DISTINCT FROM $11::text AND NOT coalesce(t.t1 = ANY($13::numeric[]), false) AND t.v2 IS NULL',
    );
    expect(compiled.params).toEqual(['a', 'x', 'b', '{1,2}', 'c']);
    expect(compile({ a: { $eq: 'x' }, b: { $in: ['p'] }, c: { $exists: true } }).sql).toBe(
      't.t0 = $11::text AND t.t1 = ANY($13::text[]) AND t.v2 IS NOT NULL',
    );
  });

  it('compares ranges on the value of the filter’s own type (NULL for the other type)', () => {
    expect(compile({ year: { $gte: 2020, $lt: 2025 }, name: { $gt: 'm' } })).toMatchObject({
      sql: 't.t0 >= $11::numeric AND t.t0 < $12::numeric AND t.t1 > $14::text',
      params: ['year', 2020, 2025, 'name', 'm'],
    });
  });

  it('takes field names such as __proto__ and constructor as names like any other', () => {
    const filter = JSON.parse('{"__proto__": {"$in": ["x"]}, "constructor": "y"}') as MetadataFilter;
    expect(metadataFilterProblem(filter)).toBeNull();
    expect(compile(filter).params).toEqual(['__proto__', '{"x"}', 'constructor', 'y']);
  });

  it('never puts client text into the SQL, however it is spelt', () => {
    const hostile = "x'); DROP TABLE documents; --";
    const compiled = compile({ [hostile]: { $gt: hostile, $ne: hostile, $exists: true } });
    expect(`${compiled.fields} ${compiled.typed} ${compiled.sql}`).not.toContain('DROP');
    expect(compiled.params).toEqual([hostile, hostile, hostile]);
  });

  it('passes each list as one array literal, quoting and escaping strings', () => {
    const compiled = compile({
      s: { $in: ['plain', 'say "hi"', 'C:\\dir', 'a,b', '{x}', 'NULL', ''] },
      n: { $nin: [1, -2.5, 1e21] },
    });
    expect(compiled.params).toEqual([
      's',
      '{"plain","say \\"hi\\"","C:\\\\dir","a,b","{x}","NULL",""}',
      'n',
      '{1,-2.5,1e+21}',
    ]);
  });

  it('matches everything when the filter has no fields', () => {
    expect(compile({})).toEqual({ fields: '', typed: '', sql: 'true', params: [] });
  });
});

describe('compound filters (OpenAI’s and / or)', () => {
  const compile = (filter: MetadataFilter) => compileMetadataFilter(filter, 'm.metadata', 'v', 't', 10);

  it('nests parts in parentheses, reading a field named in several parts once', () => {
    const compiled = compile(
      new CompoundFilter('or', [
        { kind: 'policy' },
        new CompoundFilter('and', [{ year: { $gte: 2020 } }, { kind: { $ne: 'draft' } }]),
      ]),
    );
    expect(compiled).toEqual({
      fields: 'm.metadata -> $10::text AS v0, m.metadata -> $12::text AS v1',
      typed:
        "CASE WHEN jsonb_typeof(v.v0) = 'string' THEN v.v0 #>> '{}' END AS t0, " +
        "CASE WHEN jsonb_typeof(v.v1) = 'number' THEN v.v1::numeric END AS t1",
      sql: '(t.t0 = $11::text OR (t.t1 >= $13::numeric AND t.t0 IS DISTINCT FROM $14::text))',
      params: ['kind', 'policy', 'year', 2020, 'draft'],
    });
  });
});

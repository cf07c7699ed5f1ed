import { anyOf, atLeast, except, tsvectorSql } from '../../src/retrieval/text-search.js';

/** The operands a tsquery string names, unquoted, so that tests compare sets rather than spellings. */
const groups = (query: string) =>
  query.split(' | ').map((group) =>
    group
      .replace(/^\(|\)$/g, '')
      .split(' & ')
      .map((operand) => operand.slice(1, -1))
      .sort(),
  );

describe('tsquery building', () => {
  it('joins lexemes with OR, each quoted', () => {
    expect(anyOf(['cat', 'dog'])).toBe("'cat' | 'dog'");
    expect(anyOf(['cat'])).toBe("'cat'");
  });

  it('quotes characters that would otherwise be tsquery operators or break the quoting', () => {
    expect(anyOf(["o'neil"])).toBe("'o''neil'");
    expect(anyOf(['back\\slash'])).toBe("'back\\\\slash'");
    expect(anyOf(['a&b', 'c|d', '!e', 'f:*', '(g)'])).toBe("'a&b' | 'c|d' | '!e' | 'f:*' | '(g)'");
  });

  it('asks for at least k of n lexemes as every k-combination, each once', () => {
    const query = atLeast(2, ['a', 'b', 'c', 'd']);
    expect(groups(query)).toEqual([
      ['a', 'b'],
      ['a', 'c'],
      ['a', 'd'],
      ['b', 'c'],
      ['b', 'd'],
      ['c', 'd'],
    ]);
    expect(query).toBe("('a' & 'b') | ('a' & 'c') | ('a' & 'd') | ('b' & 'c') | ('b' & 'd') | ('c' & 'd')");
  });

  it('needs all lexemes when k equals n and any one when k is 1', () => {
    expect(atLeast(3, ['a', 'b', 'c'])).toBe("('a' & 'b' & 'c')");
    expect(groups(atLeast(1, ['a', 'b', 'c']))).toEqual([['a'], ['b'], ['c']]);
  });

  it('makes C(n, k) groups', () => {
    const lexemes = Array.from({ length: 8 }, (_, i) => `w${i}`);
    expect(groups(atLeast(3, lexemes))).toHaveLength(56);
    expect(new Set(groups(atLeast(3, lexemes)).map((group) => group.join())).size).toBe(56);
  });

  it('excludes lexemes with AND NOT, and leaves the query alone when there is nothing to exclude', () => {
    expect(except("'cat'", ['dog', 'eel'])).toBe("('cat') & !('dog' | 'eel')");
    expect(except("'cat' | 'owl'", [])).toBe("'cat' | 'owl'");
  });

  it('tokenizes with one expression, reading slashes and hyphens as spaces', () => {
    expect(tsvectorSql('c.content')).toBe("to_tsvector('english', translate(c.content, '/-', '  '))");
  });
});

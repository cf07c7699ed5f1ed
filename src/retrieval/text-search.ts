/**
 * PostgreSQL's `english` configuration: the Snowball (Porter2) stemmer and its stop-word list. Indexing
 * and querying must use the same one, or stemmed terms stop matching.
 */
export const TEXT_SEARCH_CONFIG = 'english';

/**
 * Characters read as word separators before PostgreSQL's parser sees the text. The parser keeps
 * `p53/MDM2` whole (as a file path) and indexes `COVID-19` as `covid` plus a signed `-19`, so a
 * query that spells the words apart never matches. Lucene's StandardTokenizer, which the published
 * BM25 baselines (Anserini) use, splits at both; so do we.
 */
const WORD_SEPARATORS = '/-';

/**
 * SQL for the tsvector of the text expression `textSql`: the one way indexing and querying tokenize,
 * so that the terms of both always agree (a reindex migration must repeat it when it changes).
 */
export function tsvectorSql(textSql: string): string {
  return `to_tsvector('${TEXT_SEARCH_CONFIG}', translate(${textSql}, '${WORD_SEPARATORS}', '${' '.repeat(WORD_SEPARATORS.length)}'))`;
}

/** A lexeme as a tsquery operand, quoted so that no character in it acts as an operator. */
function operand(lexeme: string): string {
  return `'${lexeme.replace(/\\/g, '\\\\').replace(/'/g, "''")}'`;
}

/** `'a' | 'b' | ...`: matches a chunk that holds any of the lexemes (already stemmed, so no config is applied). */
export function anyOf(lexemes: readonly string[]): string {
  return lexemes.map(operand).join(' | ');
}

/** `('a' & 'b') | ('a' & 'c') | ...`: matches a chunk that holds at least `k` of the lexemes. */
export function atLeast(k: number, lexemes: readonly string[]): string {
  const groups: string[] = [];
  const pick = (start: number, chosen: string[]) => {
    if (chosen.length === k) return void groups.push(`(${chosen.map(operand).join(' & ')})`);
    for (let i = start; i <= lexemes.length - (k - chosen.length); i++) pick(i + 1, [...chosen, lexemes[i]]);
  };
  pick(0, []);
  return groups.join(' | ');
}

/** Matches chunks that match `wanted` and hold none of `exclude`. */
export function except(wanted: string, exclude: readonly string[]): string {
  return exclude.length === 0 ? wanted : `(${wanted}) & !(${anyOf(exclude)})`;
}

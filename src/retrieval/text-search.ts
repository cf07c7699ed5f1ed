/**
 * PostgreSQL's `english` configuration: the Snowball (Porter2) stemmer and its stop-word list. Indexing
 * and querying must use the same one, or stemmed terms stop matching.
 */
export const TEXT_SEARCH_CONFIG = 'english';

/** A lexeme as a tsquery operand, quoted so that no character in it acts as an operator. */
function operand(lexeme: string): string {
  return `'${lexeme.replace(/\\/g, '\\\\').replace(/'/g, "''")}'`;
}

/** `'a' | 'b' | ...`: matches a chunk that holds any of the lexemes (already stemmed, so no config is applied). */
export function anyOf(lexemes: readonly string[]): string {
  return lexemes.map(operand).join(' | ');
}

/** Matches chunks holding any of `include` and none of `exclude`. */
export function anyOfExcept(include: readonly string[], exclude: readonly string[]): string {
  const wanted = `(${anyOf(include)})`;
  return exclude.length === 0 ? wanted : `${wanted} & !(${anyOf(exclude)})`;
}

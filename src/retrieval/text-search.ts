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

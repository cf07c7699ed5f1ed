import pg from 'pg';
import { parsePgTimestamptz } from '../common/timestamps.js';

let installed = false;

/**
 * One parsing rule for the real server and the embedded store: timestamptz keeps its microseconds,
 * int8 (what `count(*)` returns) becomes a number, our counts staying far below 2^53, and a date stays
 * a string.
 */
export function installPgTypeParsers(): void {
  if (installed) return;
  pg.types.setTypeParser(pg.types.builtins.TIMESTAMPTZ, parsePgTimestamptz);
  pg.types.setTypeParser(pg.types.builtins.INT8, (text: string) => Number(text));
  // A calendar date stays `YYYY-MM-DD`: pg would otherwise make it local midnight.
  pg.types.setTypeParser(pg.types.builtins.DATE, (text: string) => text);
  installed = true;
}

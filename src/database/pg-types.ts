import pg from 'pg';
import { parsePgTimestamptz } from '../common/timestamps.js';

const TIMESTAMPTZ_OID = 1184;
const INT8_OID = 20;
const DATE_OID = 1082;

let installed = false;

/**
 * One parsing rule for the real server and the embedded store: timestamptz keeps its microseconds,
 * int8 (what `count(*)` returns) becomes a number, our counts staying far below 2^53, and a date stays
 * a string.
 */
export function installPgTypeParsers(): void {
  if (installed) return;
  pg.types.setTypeParser(TIMESTAMPTZ_OID, parsePgTimestamptz);
  pg.types.setTypeParser(INT8_OID, (text: string) => Number(text));
  // A calendar date stays `YYYY-MM-DD`: pg would otherwise make it local midnight.
  pg.types.setTypeParser(DATE_OID, (text: string) => text);
  installed = true;
}

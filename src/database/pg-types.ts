import pg from 'pg';
import { parsePgTimestamptz } from '../common/timestamps.js';

const TIMESTAMPTZ_OID = 1184;
const INT8_OID = 20;

let installed = false;

/**
 * One parsing rule for the real server and the embedded store: timestamptz keeps its microseconds,
 * and int8 (what `count(*)` returns) becomes a number; our counts stay far below 2^53.
 */
export function installPgTypeParsers(): void {
  if (installed) return;
  pg.types.setTypeParser(TIMESTAMPTZ_OID, parsePgTimestamptz);
  pg.types.setTypeParser(INT8_OID, (text: string) => Number(text));
  installed = true;
}

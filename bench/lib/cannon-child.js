/**
 * `node bench/lib/cannon-child.js '<json>'`: one `cannon()` run (bench/lib/load.js) with the options given
 * as JSON, its summary written to stdout as JSON. For a load generator in a process of its own, e.g.
 * started under `nice` so that it does not take the cores from the client it is measured against
 * (see `cannonApart` in load.js).
 */
import { cannon } from './load.js';

const result = await cannon(JSON.parse(process.argv[2]));
process.stdout.write(JSON.stringify(result));

/**
 * Many tenants in one database (issue 24): bench/tenants.js as a section. Two databases of its own
 * (the crowded one, ~1,000,000 chunks by default, and the measured tenant alone); only when named.
 * See tenants.js for the env.
 */
import { run as runTenants, tables, tenantSettings } from '../tenants.js';

export const description =
  "a small tenant's search p50/p95 among ~1M chunks of 330 tenants vs alone in a fresh database (same run)";
export const explicitOnly = true;

export async function run(ctx) {
  const settings = tenantSettings();
  ctx.log(`settings ${JSON.stringify(settings)}`);
  const figures = await runTenants({ createDatabase: () => ctx.createDatabase(), settings, log: ctx.log });
  tables(figures, ctx.table);
  return figures;
}

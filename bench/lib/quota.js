import pg from 'pg';

/**
 * Sets an organization's quota directly in the database: a benchmark's set-up, so that the run
 * measures queries rather than the admin API.
 */
export async function setCredits(databaseUrl, userEmail, total, used = 0) {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const { rowCount } = await client.query(
      `UPDATE subscriptions s SET monthly_credits = $2, credits_used = $3
         FROM users u WHERE u.organization_id = s.organization_id AND u.email = $1`,
      [userEmail.toLowerCase(), total, used],
    );
    if (rowCount !== 1) throw new Error(`no subscription for ${userEmail}`);
  } finally {
    await client.end();
  }
}

export async function creditsUsed(databaseUrl, userEmail) {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const { rows } = await client.query(
      `SELECT s.credits_used, (SELECT count(*)::int FROM usage_events e WHERE e.organization_id = s.organization_id) AS ledger
         FROM subscriptions s JOIN users u ON u.organization_id = s.organization_id WHERE u.email = $1`,
      [userEmail.toLowerCase()],
    );
    return { creditsUsed: rows[0].credits_used, ledgerLines: rows[0].ledger };
  } finally {
    await client.end();
  }
}

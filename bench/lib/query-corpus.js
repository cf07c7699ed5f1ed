/**
 * The private knowledge base and the question of the `query` and `query-floor` sections, in one
 * place so that the service and its database floor are measured on the same data.
 */
import { setCredits } from './quota.js';

const TOPICS = [
  'billing',
  'rotation',
  'ingestion',
  'latency',
  'quota',
  'retention',
  'backup',
  'failover',
  'tracing',
  'alerting',
];

export function documentText(i) {
  const topic = TOPICS[i % TOPICS.length];
  const other = TOPICS[(i * 7 + 3) % TOPICS.length];
  return {
    title: `Runbook ${i}: ${topic}`,
    content:
      `## ${topic} procedure ${i}\n\nWhen ${topic} alarms fire on service ${i}, check the ${other} dashboard first. ` +
      `Escalate to the on-call engineer for ${topic} after fifteen minutes. `.repeat(3) +
      `\n\nThe ${other} team owns step ${i % 13}. Record every change in the ${topic} log and review it weekly.`,
  };
}

/** The body every measured POST /v1/query/ sends. */
export const QUERY_BODY = { query: 'Who do I escalate to when quota alarms fire?', top_k: 5 };

/**
 * A user with an API key, all but unlimited credits and `documents` private documents uploaded
 * through the API; checks that the question finds sources. Returns `{ user, key, headers }`.
 */
export async function prepareQueryCorpus(ctx, documents, keyName) {
  const { baseUrl } = ctx.service;
  const user = await ctx.signUp();
  const key = await ctx.createKey(user, keyName);
  await setCredits(ctx.database.url, user.email, 100_000_000);
  ctx.log(`uploading ${documents} documents`);
  for (let i = 0; i < documents; i++) {
    const response = await ctx.call(baseUrl, 'POST', '/v1/documents/', { body: documentText(i), headers: user.auth });
    if (response.status !== 201) throw new Error(`upload ${i} answered ${response.status}`);
  }
  const headers = { 'X-API-Key': key.key };
  const probe = await ctx.call(baseUrl, 'POST', '/v1/query/', { body: QUERY_BODY, headers });
  if (probe.status !== 200 || probe.body.sources.length === 0)
    throw new Error(`probe query answered ${probe.status} with no sources`);
  return { user, key, headers, probe: probe.body };
}

import { jest } from '@jest/globals';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { partnerKey } from '../support/api-keys.js';
import { createKey, signUp, startTestApp, type SignedInUser, type TestApp } from '../support/app.js';
import { API_KEY_MESSAGE, freshMinute, NOT_PROVIDED, UUID, WWW_AUTHENTICATE } from '../support/core.js';
import { createDomain, organizationIdOf, setCredits, signInAdmin } from '../support/knowledge.js';
import { SearchService } from '../../src/query/search.service.js';

const PENGUINS = {
  title: 'Penguins',
  content: 'Penguins eat krill and small fish. They hunt in cold southern seas.',
  metadata: { url: 'https://zoo.example/penguins', year: 2024 },
};
const LAB = { title: 'Lab', content: 'Penguins are studied in the secret lab.' };
const PRIVATE = {
  title: 'Key rotation',
  content: 'Rotate an API key every ninety days. The old key keeps working for one day after rotation.',
  metadata: { team: 'security' },
};
const ALL_TOOLS = ['ask', 'fetch', 'list_knowledge_bases', 'search'];

/** The SDK's own client, connected over HTTP as an agent's MCP configuration would. */
async function connect(test: TestApp, credential: string): Promise<Client> {
  const client = new Client({ name: 'mcp-e2e', version: '1.0.0' });
  const transport = new StreamableHTTPClientTransport(new URL(`${test.url}/mcp`), {
    requestInit: { headers: { Authorization: `Bearer ${credential}` } },
  });
  await client.connect(transport);
  // The contract's floor: protocol version 2025-06-18 or later (versions are dates, so they sort as text).
  expect(transport.protocolVersion! >= '2025-06-18').toBe(true);
  return client;
}

const ACCEPT = { Accept: 'application/json, text/event-stream' };
const toolCall = (name: string, args: Record<string, unknown>) => ({
  jsonrpc: '2.0',
  id: 7,
  method: 'tools/call',
  params: { name, arguments: args },
});

const call = (client: Client, name: string, args: Record<string, unknown> = {}) =>
  client.callTool({ name, arguments: args }) as Promise<CallToolResult>;

/** The text content of a result, parsed (a structured result's text is its JSON). */
const textOf = (result: CallToolResult) => {
  const [first] = result.content;
  if (first.type !== 'text') throw new Error(`expected text content, got ${first.type}`);
  return first.text;
};
const jsonOf = (result: CallToolResult) => JSON.parse(textOf(result)) as Record<string, unknown>;

/** A successful structured result: its JSON text and its structuredContent are the same object. */
function structured(result: CallToolResult): Record<string, unknown> {
  expect(result.isError).toBeFalsy();
  expect(result.structuredContent).toEqual(jsonOf(result));
  return result.structuredContent as Record<string, unknown>;
}

/** A refusal: a tool error whose text is the REST route's error body with its status. */
function refusal(result: CallToolResult): Record<string, unknown> {
  expect(result.isError).toBe(true);
  expect(result.structuredContent).toBeUndefined();
  return jsonOf(result);
}

describe('MCP (/mcp): the knowledge base as tools for agents', () => {
  let test: TestApp;
  let user: SignedInUser;
  let key: string;
  let client: Client;
  let zooIds: string[];
  const clients: Client[] = [];
  const open = async (credential: string) => {
    const opened = await connect(test, credential);
    clients.push(opened);
    return opened;
  };

  beforeAll(async () => {
    // Searches metered (1 credit), so the ledger shows them as it shows REST searches.
    test = await startTestApp({ SEARCH_CREDIT_COST: '1' });
    zooIds = await createDomain(test, 'zoo', [PENGUINS]);
    await createDomain(test, 'secret-lab', [LAB]);
  });
  afterAll(async () => {
    await Promise.all(clients.map((opened) => opened.close()));
    await test.close();
  });
  beforeEach(async () => {
    user = await signUp(test);
    key = (await createKey(test, user)).key;
    await test.http().post('/v1/documents/').set(user.auth).send(PRIVATE).expect(201);
    client = await open(key);
  });

  const ledger = async () =>
    (
      await test.db.query(
        'SELECT operation, domain, credits FROM usage_events WHERE user_id = $1 ORDER BY created_at',
        [user.id],
      )
    ).rows;
  const allowDomains = async (domains: string[] | null) =>
    test.db.query('UPDATE organizations SET allowed_domains = $2 WHERE id = $1', [
      await organizationIdOf(test, user.id),
      domains === null ? null : JSON.stringify(domains),
    ]);

  describe('tools', () => {
    it('lists the four tools, each with an input and an output schema', async () => {
      const { tools } = await client.listTools();
      expect(tools.map((tool) => tool.name).sort()).toEqual(ALL_TOOLS);
      for (const tool of tools) {
        expect(tool.inputSchema.type).toBe('object');
        expect(tool.outputSchema?.type).toBe('object');
      }
      const search = tools.find((tool) => tool.name === 'search')!;
      expect(Object.keys(search.inputSchema.properties ?? {}).sort()).toEqual([
        'collection_ids',
        'domain',
        'filter',
        'query',
        'top_k',
      ]);
      expect(search.inputSchema.required).toEqual(['query']);
      expect(client.getServerVersion()?.name).toBe('knowledge-query-service');
    });

    it('search: passages of the private documents, as JSON text and structuredContent', async () => {
      const { results } = structured(await call(client, 'search', { query: 'rotate key' })) as {
        results: Record<string, unknown>[];
      };
      expect(results).toEqual([
        {
          id: expect.stringMatching(UUID),
          title: 'Key rotation',
          url: null,
          text: expect.stringContaining('ninety days'),
          score: expect.any(Number),
          document_id: expect.stringMatching(UUID),
          start: 0,
          end: PRIVATE.content.length,
          page: null,
        },
      ]);
    });

    it('search: a public domain, top_k and filter as on REST, the url from the metadata', async () => {
      const { results } = structured(
        await call(client, 'search', { query: 'penguins krill', domain: 'zoo', top_k: 1 }),
      );
      expect(results).toEqual([
        expect.objectContaining({ title: 'Penguins', url: 'https://zoo.example/penguins', document_id: zooIds[0] }),
      ]);
      const filtered = structured(
        await call(client, 'search', { query: 'penguins', domain: 'zoo', filter: { year: { $gt: 2024 } } }),
      );
      expect(filtered).toEqual({ results: [] });
    });

    it("fetch: a result's id gives the whole document, its metadata and url", async () => {
      const { results } = structured(await call(client, 'search', { query: 'rotate key' })) as {
        results: { id: string; document_id: string }[];
      };
      const document = structured(await call(client, 'fetch', { id: results[0].id }));
      expect(document).toEqual({
        id: results[0].document_id,
        title: 'Key rotation',
        text: PRIVATE.content,
        url: null,
        metadata: { team: 'security' },
      });
      // A document id works too; a public domain's document too, when the organization may ask it.
      expect(structured(await call(client, 'fetch', { id: results[0].document_id }))).toEqual(document);
      expect(structured(await call(client, 'fetch', { id: zooIds[0] }))).toMatchObject({
        text: PENGUINS.content,
        url: 'https://zoo.example/penguins',
      });
    });

    it('ask: the answer with its sources, metered like POST /v1/query/', async () => {
      const answer = structured(await call(client, 'ask', { question: 'What do penguins eat?', domain: 'zoo' }));
      expect(answer).toEqual({
        answer: expect.stringContaining('krill'),
        sources: [expect.objectContaining({ title: 'Penguins', document_id: zooIds[0] })],
        domain: 'zoo',
        credits_used: 1,
        credits_remaining: 999,
      });
      expect(await ledger()).toEqual([{ operation: 'query', domain: 'zoo', credits: 1 }]);
    });

    it('list_knowledge_bases: the collections and the public domains the organization may ask', async () => {
      const organizationId = await organizationIdOf(test, user.id);
      const all = structured(await call(client, 'list_knowledge_bases'));
      expect(all).toEqual({
        knowledge_bases: [
          { kind: 'collection', id: organizationId, name: 'default', description: null },
          { kind: 'public', domain: 'secret-lab', name: 'Domain secret-lab', description: '' },
          { kind: 'public', domain: 'zoo', name: 'Domain zoo', description: '' },
        ],
      });
      await allowDomains(['zoo']);
      const allowed = structured(await call(client, 'list_knowledge_bases')) as {
        knowledge_bases: { kind: string; domain?: string }[];
      };
      expect(allowed.knowledge_bases.map((base) => base.domain ?? base.kind)).toEqual(['collection', 'zoo']);
      // The output schema states both shapes precisely: each kind with its own fields.
      const { tools } = await client.listTools();
      const listed = tools.find((tool) => tool.name === 'list_knowledge_bases')!;
      expect(JSON.stringify(listed.outputSchema)).toContain('"collection"');
    });

    it('works with a JWT access token as with a key', async () => {
      const withJwt = await open(user.access);
      expect((await withJwt.listTools()).tools.map((tool) => tool.name).sort()).toEqual(ALL_TOOLS);
      expect(structured(await call(withJwt, 'search', { query: 'rotate' })).results).toHaveLength(1);
    });
  });

  describe('collections', () => {
    interface Result {
      id: string;
      title: string;
      score: number;
      document_id: string;
    }
    interface RestSource {
      chunk_id: string;
      title: string;
      score: number;
    }
    const TURBINE = 'turbine maintenance';
    let acme: string;
    let globex: string;
    let initech: string;
    const docs: Record<string, string> = {};

    const collection = async (name: string) =>
      (await test.http().post('/v1/collections/').set(user.auth).send({ name }).expect(201)).body.id as string;
    const upload = async (title: string, content: string, collection_id?: string) => {
      docs[title] = (
        await test.http().post('/v1/documents/').set(user.auth).send({ title, content, collection_id }).expect(201)
      ).body.id;
    };
    const titles = (results: { title: string }[]) => results.map((result) => result.title).sort();
    const searched = async (agent: Client, args: Record<string, unknown>) =>
      (structured(await call(agent, 'search', { query: TURBINE, top_k: 10, ...args })) as { results: Result[] })
        .results;
    const asked = async (agent: Client, args: Record<string, unknown>) =>
      (structured(await call(agent, 'ask', { question: `When is the ${TURBINE}?`, ...args })) as { sources: Result[] })
        .sources;

    beforeEach(async () => {
      acme = await collection('Acme');
      globex = await collection('Globex');
      initech = await collection('Initech');
      await upload('Acme manual', 'The turbine manual for Acme: turbine maintenance every spring.', acme);
      await upload('Globex manual', 'The turbine manual for Globex: turbine blades are inspected monthly.', globex);
      await upload('Initech manual', 'The turbine manual for Initech: turbine secrets nobody else may read.', initech);
      await upload('Default manual', 'The turbine manual of the default collection: turbine maintenance history.');
    });

    it('search and ask: collection_ids asks those collections as one corpus, the same results and scores as REST', async () => {
      const both = await searched(client, { collection_ids: [acme, globex] });
      expect(titles(both)).toEqual(['Acme manual', 'Globex manual']);
      const rest = await test
        .http()
        .post('/v1/search/')
        .set(user.auth)
        .send({ query: TURBINE, top_k: 10, collection_ids: [acme, globex] })
        .expect(200);
      const pairs = (rest.body.results as RestSource[]).map((source) => [source.chunk_id, source.score]);
      expect(both.map((result) => [result.id, result.score])).toEqual(pairs);
      // Without collection_ids, or with "default": the default collection only, as on REST.
      expect(titles(await searched(client, {}))).toEqual(['Default manual']);
      expect(titles(await searched(client, { collection_ids: ['default'] }))).toEqual(['Default manual']);

      const sources = await asked(client, { collection_ids: [acme, initech] });
      expect(titles(sources)).toEqual(['Acme manual', 'Initech manual']);
      const query = await test
        .http()
        .post('/v1/query/')
        .set(user.auth)
        .send({ query: `When is the ${TURBINE}?`, collection_ids: [acme, initech] })
        .expect(200);
      expect(sources.map((source) => [source.id, source.score])).toEqual(
        (query.body.sources as RestSource[]).map((source) => [source.chunk_id, source.score]),
      );
      expect(await ledger()).toEqual([
        { operation: 'search', domain: null, credits: 1 },
        { operation: 'search', domain: null, credits: 1 },
        { operation: 'search', domain: null, credits: 1 },
        { operation: 'search', domain: null, credits: 1 },
        { operation: 'query', domain: null, credits: 1 },
        { operation: 'query', domain: null, credits: 1 },
      ]);
    });

    it("domain with collection_ids, an unknown or another organization's collection: REST's refusal as a tool error", async () => {
      const BOTH =
        'Give either domain or collection_ids, not both: a question asks a public domain or your collections.';
      const other = await signUp(test);
      const foreign = (await test.http().post('/v1/collections/').set(other.auth).send({ name: 'B' }).expect(201)).body
        .id as string;
      const cases: [Record<string, unknown>, number][] = [
        [{ domain: 'zoo', collection_ids: [acme] }, 400],
        [{ collection_ids: [acme, foreign] }, 404],
        [{ collection_ids: ['00000000-0000-4000-8000-000000000000'] }, 404],
        [{ collection_ids: ['nope'] }, 404],
      ];
      for (const [args, status] of cases) {
        const rest = await test
          .http()
          .post('/v1/search/')
          .set(user.auth)
          .send({ query: TURBINE, ...args })
          .expect(status);
        expect(refusal(await call(client, 'search', { query: TURBINE, ...args }))).toEqual({ status, ...rest.body });
        expect(refusal(await call(client, 'ask', { question: TURBINE, ...args }))).toEqual({ status, ...rest.body });
      }
      expect(refusal(await call(client, 'search', { query: TURBINE, domain: 'zoo', collection_ids: [acme] }))).toEqual({
        status: 400,
        detail: `collection_ids: ${BOTH}`,
        fields: { collection_ids: [BOTH] },
      });
      expect(refusal(await call(client, 'ask', { question: TURBINE, collection_ids: ['nope'] }))).toEqual({
        status: 404,
        detail: 'Collection "nope" not found.',
      });
      expect(await ledger()).toEqual([]);
    });

    it('a key limited to collections: every tool keeps to its own collections', async () => {
      const limited = await open((await partnerKey(test, user, { collection_ids: [acme, globex] })).key);
      // search and ask: its own collections by default, any of them by name.
      expect(titles(await searched(limited, {}))).toEqual(['Acme manual', 'Globex manual']);
      expect(titles(await asked(limited, {}))).toEqual(['Acme manual', 'Globex manual']);
      expect(titles(await searched(limited, { collection_ids: [globex] }))).toEqual(['Globex manual']);
      // Another collection, the default one included: the REST 404, never a passage.
      for (const id of [initech, 'default', user.id]) {
        const notFound = { status: 404, detail: `Collection ${JSON.stringify(id)} not found.` };
        expect(refusal(await call(limited, 'search', { query: TURBINE, collection_ids: [acme, id] }))).toEqual(
          notFound,
        );
        expect(refusal(await call(limited, 'ask', { question: TURBINE, collection_ids: [id] }))).toEqual(notFound);
      }
      // fetch: a document or passage of another collection is not found; its own are read.
      const initechPassage = (await searched(client, { collection_ids: [initech] }))[0].id;
      const defaultPassage = (await searched(client, {}))[0].id;
      for (const id of [docs['Initech manual'], initechPassage, docs['Default manual'], defaultPassage]) {
        const fetched = await call(limited, 'fetch', { id });
        expect(JSON.stringify(fetched)).not.toContain('turbine');
        expect(refusal(fetched)).toEqual({ status: 404, detail: `Document "${id}" not found.` });
      }
      const own = (await searched(limited, { collection_ids: [acme] }))[0];
      expect(structured(await call(limited, 'fetch', { id: own.id }))).toMatchObject({
        id: docs['Acme manual'],
        title: 'Acme manual',
      });
      // A public domain's documents stay readable, as asking the domain is.
      expect(structured(await call(limited, 'fetch', { id: zooIds[0] }))).toMatchObject({ title: 'Penguins' });
      // list_knowledge_bases: only its own collections, beside the public domains.
      expect(structured(await call(limited, 'list_knowledge_bases'))).toEqual({
        knowledge_bases: [
          { kind: 'collection', id: acme, name: 'Acme', description: null },
          { kind: 'collection', id: globex, name: 'Globex', description: null },
          { kind: 'public', domain: 'secret-lab', name: 'Domain secret-lab', description: '' },
          { kind: 'public', domain: 'zoo', name: 'Domain zoo', description: '' },
        ],
      });
    });
  });

  describe('refusals', () => {
    it("lists only the tools the key's scopes allow, and refuses the others", async () => {
      const queryOnly = await open((await partnerKey(test, user, { scopes: ['query'] })).key);
      expect((await queryOnly.listTools()).tools.map((tool) => tool.name).sort()).toEqual([
        'ask',
        'list_knowledge_bases',
        'search',
      ]);
      expect(refusal(await call(queryOnly, 'fetch', { id: zooIds[0] }))).toEqual({
        status: 403,
        detail: 'This API key lacks the scope "documents:read".',
      });

      const readOnly = await open((await partnerKey(test, user, { scopes: ['documents:read'] })).key);
      expect((await readOnly.listTools()).tools.map((tool) => tool.name).sort()).toEqual([
        'fetch',
        'list_knowledge_bases',
      ]);
      expect(refusal(await call(readOnly, 'search', { query: 'penguins' }))).toEqual({
        status: 403,
        detail: 'This API key lacks the scope "query".',
      });

      const usageOnly = await open((await partnerKey(test, user, { scopes: ['usage:read'] })).key);
      expect((await usageOnly.listTools()).tools.map((tool) => tool.name)).toEqual(['list_knowledge_bases']);
      expect(refusal(await call(usageOnly, 'ask', { question: 'penguins?' }))).toMatchObject({ status: 403 });
      expect(await ledger()).toEqual([]);
    });

    it('no credits left: ask and (metered) search are refused with the 402 body, nothing charged', async () => {
      await setCredits(test, user.id, 5, 5);
      const asked = refusal(await call(client, 'ask', { question: 'What do penguins eat?' }));
      expect(asked).toMatchObject({
        status: 402,
        detail: 'Credit quota exhausted. Upgrade your plan or wait for your quota to reset.',
        code: 'quota_exhausted',
      });
      expect(refusal(await call(client, 'search', { query: 'penguins' }))).toMatchObject({ status: 402 });
      expect(await ledger()).toEqual([]);
    });

    it("a key's own monthly credit limit applies as on REST", async () => {
      const capped = await open((await partnerKey(test, user, { monthly_credit_limit: 1 })).key);
      structured(await call(capped, 'ask', { question: 'What do penguins eat?', domain: 'zoo' }));
      expect(refusal(await call(capped, 'ask', { question: 'What do penguins eat?', domain: 'zoo' }))).toMatchObject({
        status: 402,
        detail: "This API key's monthly credit limit is exhausted.",
      });
      expect(await ledger()).toEqual([{ operation: 'query', domain: 'zoo', credits: 1 }]);
    });

    it("a domain outside allowed_domains: 403's detail, for search, ask and fetch", async () => {
      await allowDomains(['secret-lab']);
      const forbidden = { status: 403, detail: 'Your organization does not have access to this domain.' };
      expect(refusal(await call(client, 'search', { query: 'penguins', domain: 'zoo' }))).toEqual(forbidden);
      expect(refusal(await call(client, 'ask', { question: 'penguins?', domain: 'zoo' }))).toEqual(forbidden);
      expect(refusal(await call(client, 'fetch', { id: zooIds[0] }))).toEqual(forbidden);
      expect(await ledger()).toEqual([]);
    });

    it('an inactive or unknown domain is not found, its documents too', async () => {
      const admin = await signInAdmin(test);
      await test.http().patch('/v1/domains/zoo/').set(admin.auth).send({ is_active: false }).expect(200);
      try {
        expect(refusal(await call(client, 'search', { query: 'penguins', domain: 'zoo' }))).toEqual({
          status: 404,
          detail: 'Domain "zoo" not found.',
        });
        expect(refusal(await call(client, 'ask', { question: 'penguins?', domain: 'nowhere' }))).toEqual({
          status: 404,
          detail: 'Domain "nowhere" not found.',
        });
        expect(refusal(await call(client, 'fetch', { id: zooIds[0] }))).toEqual({
          status: 404,
          detail: `Document "${zooIds[0]}" not found.`,
        });
      } finally {
        await test.http().patch('/v1/domains/zoo/').set(admin.auth).send({ is_active: true }).expect(200);
      }
    });

    it("another organization's document or passage is not found, as an unknown id", async () => {
      const other = await signUp(test);
      const created = await test.http().post('/v1/documents/').set(other.auth).send(PRIVATE).expect(201);
      const otherClient = await open(other.access);
      const { results } = structured(await call(otherClient, 'search', { query: 'rotate' })) as {
        results: { id: string }[];
      };
      for (const id of [created.body.id as string, results[0].id, '00000000-0000-4000-8000-000000000000', 'nope'])
        expect(refusal(await call(client, 'fetch', { id }))).toEqual({
          status: 404,
          detail: `Document "${id}" not found.`,
        });
    });

    it('a bad argument is a tool error naming it, not a transport failure', async () => {
      const cases: [string, Record<string, unknown>, string][] = [
        ['search', {}, 'query'],
        ['search', { query: '   ' }, 'query'],
        ['search', { query: 'penguins', top_k: 0 }, 'top_k'],
        ['search', { query: 'penguins', top_k: 'five' }, 'top_k'],
        ['search', { query: 'penguins', filter: { year: { $foo: 1 } } }, 'filter'],
        ['search', { query: 'penguins', collection_ids: [] }, 'collection_ids'],
        ['search', { query: 'penguins', collection_ids: 'default' }, 'collection_ids'],
        [
          'ask',
          { question: 'penguins?', collection_ids: Array.from({ length: 21 }, () => 'default') },
          'collection_ids',
        ],
        ['search', { query: 'penguins', collections: ['default'] }, 'collections'],
        ['ask', { question: 'x'.repeat(4001) }, 'question'],
        ['ask', { question: 'penguins?', domain: 7 }, 'domain'],
        ['fetch', {}, 'id'],
      ];
      for (const [tool, args, argument] of cases) {
        const result = await call(client, tool, args);
        expect({ tool, args, isError: result.isError }).toEqual({ tool, args, isError: true });
        expect(textOf(result)).toContain(argument);
      }
      expect(textOf(await call(client, 'search', { query: 'x', filter: { year: { $foo: 1 } } }))).toContain('$foo');
      // collection_ids: REST's words (collectionIdsProblem).
      expect(textOf(await call(client, 'search', { query: 'x', collection_ids: [] }))).toContain(
        'This list may not be empty. at collection_ids',
      );
      expect(
        textOf(
          await call(client, 'ask', { question: 'x', collection_ids: Array.from({ length: 21 }, () => 'default') }),
        ),
      ).toContain('Ensure this field has no more than 20 elements. at collection_ids');
      expect(textOf(await call(client, 'search', { query: 'x', collection_ids: [''] }))).toContain(
        'Expected a list of collection ids. at collection_ids',
      );
      expect(await ledger()).toEqual([]);
    });

    it('text PostgreSQL cannot store (a NUL, a lone surrogate) is a bad argument naming it, not a 500', async () => {
      const cases: [string, Record<string, unknown>, string][] = [
        ['search', { query: 'pen\u0000guins' }, 'query'],
        ['search', { query: 'penguins', domain: 'zo\u0000' }, 'domain'],
        ['ask', { question: 'penguins\ud800?' }, 'question'],
      ];
      for (const [tool, args, argument] of cases) {
        const result = await call(client, tool, args);
        expect({ tool, isError: result.isError }).toEqual({ tool, isError: true });
        expect(textOf(result)).toMatch(/(Null|Surrogate) characters are not allowed\./);
        expect(textOf(result)).toContain(argument);
      }
      expect(await ledger()).toEqual([]);
    });

    it('a JSON-RPC batch is refused: one POST is one call, so the rate limit counts every call', async () => {
      const limited = await partnerKey(test, user, { rate_limit_per_minute: 3 });
      const batch = Array.from({ length: 20 }, (_, id) => ({ ...toolCall('search', { query: 'penguins' }), id }));
      const refused = await test
        .http()
        .post('/mcp')
        .set({ Authorization: `Bearer ${limited.key}`, ...ACCEPT })
        .send(batch)
        .expect(400);
      expect(refused.body).toEqual({
        jsonrpc: '2.0',
        id: null,
        error: {
          code: -32600,
          message: 'Invalid Request: JSON-RPC batches are not supported; send one message per POST.',
        },
      });
      expect(await ledger()).toEqual([]);
    });

    it("an Idempotency-Key replay does not lend one key's scopes to another key of the organization", async () => {
      const reader = await partnerKey(test, user, { scopes: ['documents:read'] });
      const queryOnly = await partnerKey(test, user, { scopes: ['query'] });
      const fetchZoo = toolCall('fetch', { id: zooIds[0] });
      const send = (credential: string) =>
        test
          .http()
          .post('/mcp')
          .set({ Authorization: `Bearer ${credential}`, ...ACCEPT, 'Idempotency-Key': 'fetch-once' })
          .send(fetchZoo);
      const first = await send(reader.key).expect(200);
      expect(first.body.result.structuredContent).toMatchObject({ title: 'Penguins' });
      expect((await send(reader.key).expect(200)).headers['idempotent-replayed']).toBe('true');
      const other = await send(queryOnly.key);
      expect(JSON.stringify(other.body)).not.toContain('krill');
      expect(other.status).toBe(422);
      expect(other.body).toEqual({ detail: 'This Idempotency-Key was already used with a different request.' });
    });

    it('a transient tool failure (500, 503) is not stored for its Idempotency-Key: the retry runs again', async () => {
      const searches = test.app.get(SearchService);
      const spy = jest.spyOn(searches, 'search').mockRejectedValueOnce(new Error('connection reset'));
      try {
        const send = () =>
          test
            .http()
            .post('/mcp')
            .set({ Authorization: `Bearer ${key}`, ...ACCEPT, 'Idempotency-Key': 'search-retry' })
            .send(toolCall('search', { query: 'penguins', domain: 'zoo' }))
            .expect(200);
        const failed = await send();
        expect(JSON.parse(failed.body.result.content[0].text)).toMatchObject({ status: 500 });
        const retried = await send();
        expect(retried.headers['idempotent-replayed']).toBeUndefined();
        expect(retried.body.result.structuredContent.results[0]).toMatchObject({ title: 'Penguins' });
      } finally {
        spy.mockRestore();
      }
    });

    it('no credential or a bad one: 401 as elsewhere, and the SDK client fails to connect', async () => {
      const initialize = {
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'x', version: '1' } },
      };
      const accept = ACCEPT;
      const none = await test.http().post('/mcp').set(accept).send(initialize).expect(401);
      expect(none.body).toEqual(NOT_PROVIDED);
      expect(none.headers['www-authenticate']).toBe(WWW_AUTHENTICATE);
      const bad = await test
        .http()
        .post('/mcp')
        .set({ ...accept, Authorization: 'Bearer svc_notakey' })
        .send(initialize)
        .expect(401);
      expect(bad.body).toEqual({ detail: API_KEY_MESSAGE });
      await expect(connect(test, 'svc_notakey')).rejects.toMatchObject({ code: 401 });
    });

    it('is rate-limited per key like a REST route', async () => {
      await freshMinute();
      const limited = await partnerKey(test, user, { rate_limit_per_minute: 4 });
      const agent = await open(limited.key); // initialize and its notification: two requests
      await call(agent, 'list_knowledge_bases');
      await call(agent, 'list_knowledge_bases');
      await expect(call(agent, 'list_knowledge_bases')).rejects.toMatchObject({ code: 429 });
    });

    it('GET and DELETE are 405: the server is stateless, without streams or sessions to end', async () => {
      await test.http().get('/mcp').set('Authorization', `Bearer ${key}`).expect(405);
      await test.http().delete('/mcp').set('Authorization', `Bearer ${key}`).expect(405);
    });

    it("a request that does not accept the transport's answers is refused by the transport (406)", async () => {
      const refused = await test
        .http()
        .post('/mcp')
        .set({ Authorization: `Bearer ${key}`, Accept: 'text/html' })
        .send(toolCall('list_knowledge_bases', {}))
        .expect(406);
      expect(refused.body).toMatchObject({ jsonrpc: '2.0', error: { code: expect.any(Number) } });
    });
  });

  it('answers a lone tools/call POST (stateless, no session), in JSON with the rate-limit and credit headers', async () => {
    const response = await test
      .http()
      .post('/mcp')
      .set({ Authorization: `Bearer ${key}`, ...ACCEPT, 'MCP-Protocol-Version': '2025-06-18' })
      .send(toolCall('ask', { question: 'What do penguins eat?', domain: 'zoo' }))
      .expect(200)
      .expect('Content-Type', /application\/json/);
    expect(response.body).toMatchObject({
      jsonrpc: '2.0',
      id: 7,
      result: { structuredContent: { answer: expect.stringContaining('krill'), credits_remaining: 999 } },
    });
    expect(response.headers['mcp-session-id']).toBeUndefined();
    expect(response.headers['x-credits-remaining']).toBe('999');
    expect(response.headers['ratelimit-limit']).toBeDefined();
    expect(response.headers['x-request-id']).toBeDefined();
  });

  it('the usage ledger counts MCP calls as it counts the REST calls', async () => {
    await test.http().post('/v1/search/').set(user.auth).send({ query: 'penguins', domain: 'zoo' }).expect(200);
    await test
      .http()
      .post('/v1/query/')
      .set(user.auth)
      .send({ query: 'What do penguins eat?', domain: 'zoo' })
      .expect(200);
    const rest = await ledger();
    await test.db.query('DELETE FROM usage_events WHERE user_id = $1', [user.id]);
    structured(await call(client, 'search', { query: 'penguins', domain: 'zoo' }));
    structured(await call(client, 'ask', { question: 'What do penguins eat?', domain: 'zoo' }));
    expect(await ledger()).toEqual(rest);
    expect(rest).toEqual([
      { operation: 'search', domain: 'zoo', credits: 1 },
      { operation: 'query', domain: 'zoo', credits: 1 },
    ]);
  });
});

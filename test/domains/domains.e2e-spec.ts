import { DomainsService } from '../../src/domains/domains.service.js';
import { createKey, type SignedInUser, signUp, startTestApp, type TestApp } from '../support/app.js';
import { signInAdmin } from '../support/knowledge.js';

const FORBIDDEN = { detail: 'You do not have permission to perform this action.' };
const SLUG_INVALID = 'Enter a valid "slug" consisting of lowercase letters, numbers or hyphens, at most 50 characters.';

describe('regions and domains', () => {
  let test: TestApp;
  let admin: SignedInUser;
  let user: SignedInUser;
  let userKey: string;
  let adminKey: string;

  beforeAll(async () => {
    test = await startTestApp();
    admin = await signInAdmin(test);
    user = await signUp(test);
    userKey = (await createKey(test, user)).key;
    adminKey = (await createKey(test, admin)).key;
  });
  afterAll(() => test.close());

  describe('admin-only operations', () => {
    // Always three entries: with fewer, Jest would pass its `done` callback as the body.
    const operations: [string, string, object | null][] = [
      ['post', '/v1/regions/', { name: 'Europe', slug: 'europe' }],
      ['patch', '/v1/regions/europe/', { name: 'EU' }],
      ['delete', '/v1/regions/europe/', null],
      ['post', '/v1/domains/', { name: 'Law', slug: 'law' }],
      ['patch', '/v1/domains/law/', { name: 'Law 2' }],
      ['delete', '/v1/domains/law/', null],
      ['post', '/v1/domains/law/documents/', { title: 'T', content: 'c' }],
      ['get', '/v1/domains/law/documents/', null],
      ['delete', '/v1/domains/law/documents/00000000-0000-4000-8000-000000000000/', null],
    ];

    it.each(operations)(
      '%s %s: 403 for a user JWT, a user API key and an admin API key',
      async (method, path, body) => {
        for (const headers of [user.auth, { 'X-API-Key': userKey }, { Authorization: `Bearer ${adminKey}` }]) {
          const call = (test.http() as unknown as Record<string, (path: string) => import('supertest').Test>)
            [method](path)
            .set(headers);
          const response = await (body ? call.send(body) : call).expect(403);
          expect(response.body).toEqual(FORBIDDEN);
        }
      },
    );

    it('changes nothing when refused', async () => {
      expect((await test.db.query(`SELECT count(*)::int AS n FROM regions WHERE slug = 'europe'`)).rows[0].n).toBe(0);
      expect((await test.db.query(`SELECT count(*)::int AS n FROM domains WHERE slug = 'law'`)).rows[0].n).toBe(0);
    });

    it('401 without credentials', async () => {
      await test.http().get('/v1/domains/').expect(401);
      await test.http().post('/v1/domains/').send({ name: 'x', slug: 'x' }).expect(401);
    });
  });

  describe('regions', () => {
    it('creates, lists, renames and deletes a region', async () => {
      const created = await test
        .http()
        .post('/v1/regions/')
        .set(admin.auth)
        .send({ name: 'Nordics', slug: 'nordics' })
        .expect(201);
      expect(Object.keys(created.body).sort()).toEqual(['created_at', 'id', 'name', 'slug']);
      expect(created.body).toMatchObject({ name: 'Nordics', slug: 'nordics' });
      const listed = await test.http().get('/v1/regions/').set({ 'X-API-Key': userKey }).expect(200);
      expect(listed.body).toContainEqual(created.body);
      const renamed = await test
        .http()
        .patch('/v1/regions/nordics/')
        .set(admin.auth)
        .send({ name: 'The North', slug: 'north' })
        .expect(200);
      expect(renamed.body).toEqual({ ...created.body, name: 'The North', slug: 'north' });
      await test.http().patch('/v1/regions/nordics/').set(admin.auth).send({ name: 'x' }).expect(404);
      await test.http().delete('/v1/regions/north/').set(admin.auth).expect(204).expect('');
      expect(
        (await test.db.query('SELECT count(*)::int AS n FROM regions WHERE id = $1', [created.body.id])).rows[0].n,
      ).toBe(0);
      await test.http().delete('/v1/regions/north/').set(admin.auth).expect(404);
    });

    it.each([
      [{ slug: 'x' }, 'name: This field is required.'],
      [{ name: 'X' }, 'slug: This field is required.'],
      [{ name: 'X', slug: '' }, 'slug: This field is required.'],
      [{ name: 'X', slug: 'Upper' }, `slug: ${SLUG_INVALID}`],
      [{ name: 'X', slug: 'with space' }, `slug: ${SLUG_INVALID}`],
      [{ name: 'X', slug: 'a'.repeat(51) }, `slug: ${SLUG_INVALID}`],
      [{ name: 'X', slug: 7 }, 'slug: Not a valid string.'],
      [{ name: 'X\u0000', slug: 'nul' }, 'name: Null characters are not allowed.'],
    ])('refuses %j', async (body, detail) => {
      const response = await test.http().post('/v1/regions/').set(admin.auth).send(body).expect(400);
      expect(response.body.detail).toBe(detail);
    });

    it('refuses a duplicate slug with a 400 naming slug', async () => {
      await test.http().post('/v1/regions/').set(admin.auth).send({ name: 'Asia', slug: 'asia' }).expect(201);
      const response = await test
        .http()
        .post('/v1/regions/')
        .set(admin.auth)
        .send({ name: 'Asia again', slug: 'asia' })
        .expect(400);
      expect(response.body).toEqual({
        detail: 'slug: A region with this slug already exists.',
        fields: { slug: ['A region with this slug already exists.'] },
      });
    });
  });

  describe('domains', () => {
    it('creates a domain in a region and shows it to every authenticated caller', async () => {
      await test.http().post('/v1/regions/').set(admin.auth).send({ name: 'Americas', slug: 'americas' }).expect(201);
      const created = await test
        .http()
        .post('/v1/domains/')
        .set(admin.auth)
        .send({ name: 'Medicine', slug: 'medicine', description: 'Clinical knowledge', region: 'americas' })
        .expect(201);
      expect(Object.keys(created.body).sort()).toEqual([
        'created_at',
        'description',
        'id',
        'is_active',
        'name',
        'region',
        'slug',
      ]);
      expect(created.body).toMatchObject({
        name: 'Medicine',
        slug: 'medicine',
        description: 'Clinical knowledge',
        region: 'americas',
        is_active: true,
      });
      expect(created.body.created_at).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/);
      for (const headers of [user.auth, { 'X-API-Key': userKey }]) {
        const listed = await test.http().get('/v1/domains/').set(headers).expect(200);
        expect(listed.body).toContainEqual(created.body);
        await test.http().get('/v1/domains/medicine/').set(headers).expect(200, created.body);
      }
    });

    it('defaults description to empty and region to null', async () => {
      const created = await test
        .http()
        .post('/v1/domains/')
        .set(admin.auth)
        .send({ name: 'Physics', slug: 'physics' })
        .expect(201);
      expect(created.body).toMatchObject({ description: '', region: null });
    });

    it('refuses a duplicate slug, an unknown region and bad fields', async () => {
      await test.http().post('/v1/domains/').set(admin.auth).send({ name: 'Chemistry', slug: 'chemistry' }).expect(201);
      const duplicate = await test
        .http()
        .post('/v1/domains/')
        .set(admin.auth)
        .send({ name: 'Chem', slug: 'chemistry' })
        .expect(400);
      expect(duplicate.body.detail).toBe('slug: A domain with this slug already exists.');
      const region = await test
        .http()
        .post('/v1/domains/')
        .set(admin.auth)
        .send({ name: 'X', slug: 'xx', region: 'atlantis' })
        .expect(400);
      expect(region.body.detail).toBe('region: No region has the slug "atlantis".');
      const name = await test.http().post('/v1/domains/').set(admin.auth).send({ name: '', slug: 'yy' }).expect(400);
      expect(name.body.detail).toBe('name: This field is required.');
      const active = await test
        .http()
        .patch('/v1/domains/chemistry/')
        .set(admin.auth)
        .send({ is_active: 'no' })
        .expect(400);
      expect(active.body.detail).toBe('is_active: Must be a valid boolean.');
      const nulled = await test.http().patch('/v1/domains/chemistry/').set(admin.auth).send({ name: null }).expect(400);
      expect(nulled.body.detail).toBe('name: This field may not be null.');
      const renamedOnto = await test
        .http()
        .patch('/v1/domains/chemistry/')
        .set(admin.auth)
        .send({ slug: 'physics' })
        .expect(400);
      expect(renamedOnto.body.detail).toBe('slug: A domain with this slug already exists.');
    });

    it('hides an inactive domain from users (404) but not from admins, and shows it again when reactivated', async () => {
      await test.http().post('/v1/domains/').set(admin.auth).send({ name: 'Archive', slug: 'archive' }).expect(201);
      const patched = await test
        .http()
        .patch('/v1/domains/archive/')
        .set(admin.auth)
        .send({ is_active: false })
        .expect(200);
      expect(patched.body.is_active).toBe(false);
      const missing = await test.http().get('/v1/domains/archive/').set(user.auth).expect(404);
      expect(missing.body).toEqual({ detail: 'Domain "archive" not found.' });
      await test.http().get('/v1/domains/archive/').set({ 'X-API-Key': userKey }).expect(404);
      const listed = await test.http().get('/v1/domains/?include_inactive=true').set(user.auth).expect(200);
      expect(listed.body.map((d: { slug: string }) => d.slug)).not.toContain('archive');
      await test.http().get('/v1/domains/archive/').set(admin.auth).expect(200);
      const adminList = await test.http().get('/v1/domains/?include_inactive=true').set(admin.auth).expect(200);
      expect(adminList.body.map((d: { slug: string }) => d.slug)).toContain('archive');
      await test.http().patch('/v1/domains/archive/').set(admin.auth).send({ is_active: true }).expect(200);
      await test.http().get('/v1/domains/archive/').set(user.auth).expect(200);
    });

    it('moves a domain between regions and detaches it when its region is deleted', async () => {
      await test.http().post('/v1/regions/').set(admin.auth).send({ name: 'Africa', slug: 'africa' }).expect(201);
      await test
        .http()
        .post('/v1/domains/')
        .set(admin.auth)
        .send({ name: 'Geology', slug: 'geology', region: 'africa' })
        .expect(201);
      const moved = await test
        .http()
        .patch('/v1/domains/geology/')
        .set(admin.auth)
        .send({ region: null, description: 'Rocks' })
        .expect(200);
      expect(moved.body).toMatchObject({ region: null, description: 'Rocks' });
      await test.http().patch('/v1/domains/geology/').set(admin.auth).send({ region: 'africa' }).expect(200);
      await test.http().delete('/v1/regions/africa/').set(admin.auth).expect(204);
      const after = await test.http().get('/v1/domains/geology/').set(user.auth).expect(200);
      expect(after.body.region).toBeNull();
    });

    it('answers 404 for unknown or malformed slugs', async () => {
      await test.http().get('/v1/domains/nope/').set(user.auth).expect(404);
      await test.http().get('/v1/domains/NOT%20A%20SLUG/').set(user.auth).expect(404);
      await test.http().patch('/v1/domains/nope/').set(admin.auth).send({ name: 'x' }).expect(404);
      await test.http().delete('/v1/domains/nope/').set(admin.auth).expect(404);
      await test
        .http()
        .post('/v1/domains/nope/documents/')
        .set(admin.auth)
        .send({ title: 'T', content: 'c' })
        .expect(404);
    });

    it('offers findActiveBySlug and unknownSlugs to other features', async () => {
      const domains = test.app.get(DomainsService);
      await test.http().post('/v1/domains/').set(admin.auth).send({ name: 'Hidden', slug: 'hidden' }).expect(201);
      await test.http().patch('/v1/domains/hidden/').set(admin.auth).send({ is_active: false }).expect(200);
      expect(await domains.findActiveBySlug('medicine')).toMatchObject({ slug: 'medicine', isActive: true });
      expect(await domains.findActiveBySlug('hidden')).toBeNull();
      expect(await domains.findActiveBySlug('nope')).toBeNull();
      expect(await domains.unknownSlugs(['medicine', 'nope', 'hidden', 'nope', 'other'])).toEqual(['nope', 'other']);
      expect(await domains.unknownSlugs([])).toEqual([]);
    });
  });

  describe('domain documents', () => {
    beforeAll(async () => {
      await test.http().post('/v1/domains/').set(admin.auth).send({ name: 'Botany', slug: 'botany' }).expect(201);
    });

    it('lets an admin add, list, read and delete documents of a domain', async () => {
      const created = await test
        .http()
        .post('/v1/domains/botany/documents/')
        .set(admin.auth)
        .send({ title: 'Ferns', content: 'Ferns reproduce with spores.', metadata: { source: 'field guide' } })
        .expect(201);
      expect(created.body).toMatchObject({ title: 'Ferns', metadata: { source: 'field guide' }, chunk_count: 1 });
      const stored = await test.db.query(
        'SELECT d.organization_id, dm.slug FROM documents d JOIN domains dm ON dm.id = d.domain_id WHERE d.id = $1',
        [created.body.id],
      );
      expect(stored.rows).toEqual([{ organization_id: null, slug: 'botany' }]);
      const listed = await test.http().get('/v1/domains/botany/documents/?limit=1').set(admin.auth).expect(200);
      expect(listed.body).toMatchObject({ count: 1, next: null, previous: null, results: [created.body] });
      await test.http().get(`/v1/domains/botany/documents/${created.body.id}/`).set(admin.auth).expect(200);
      // Not reachable through another domain or as a private document.
      await test.http().delete(`/v1/domains/medicine/documents/${created.body.id}/`).set(admin.auth).expect(404);
      await test.http().get(`/v1/documents/${created.body.id}/`).set(admin.auth).expect(404);
      await test.http().delete(`/v1/domains/botany/documents/${created.body.id}/`).set(admin.auth).expect(204);
      expect(
        (
          await test.db.query('SELECT count(*)::int AS n FROM document_chunks WHERE document_id = $1', [
            created.body.id,
          ])
        ).rows[0].n,
      ).toBe(0);
    });

    it('lets an admin fill an inactive domain', async () => {
      await test.http().post('/v1/domains/').set(admin.auth).send({ name: 'Drafts', slug: 'drafts' }).expect(201);
      await test.http().patch('/v1/domains/drafts/').set(admin.auth).send({ is_active: false }).expect(200);
      await test
        .http()
        .post('/v1/domains/drafts/documents/')
        .set(admin.auth)
        .send({ title: 'Draft', content: 'Not public yet.' })
        .expect(201);
    });
  });
});

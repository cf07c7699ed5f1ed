import { Injectable } from '@nestjs/common';
import { DataSource, type EntityManager } from 'typeorm';
import { BadRequestError, ConflictError, NotFoundError, PermissionDeniedError } from '../common/errors.js';
import type { PageRequest } from '../common/pagination.js';
import type { Principal } from '../common/principal.js';
import { isUuid } from '../common/validation.js';
import { isUniqueViolation } from '../database/pg-errors.js';
import { type Collection, isDefaultCollection } from './collection.entity.js';
import { CollectionPurger } from './collection-purger.js';
import { type CollectionWithCounts, CollectionsRepository } from './collections.repository.js';

/** Collections per organization, `default` included. */
export const COLLECTIONS_MAX = 1000;
/** Collections one question (query, search, chat message, completion) may ask at once. */
export const COLLECTION_IDS_MAX = 20;
/** What `collection_id`/`collection_ids` may say for the organization's `default` collection instead of its id. */
export const DEFAULT_COLLECTION_ALIAS = 'default';

export const tooManyCollections = (max: number) =>
  `This organization already has ${max} collections, the most it may have; delete one before creating another.`;
export const duplicateName = (name: string) => `A collection named ${JSON.stringify(name)} already exists.`;
export const DEFAULT_NOT_DELETABLE = 'The default collection cannot be deleted.';
export const DEFAULT_NOT_RENAMABLE = 'The default collection cannot be renamed.';

export interface CollectionInput {
  name: string;
  description?: string | null;
  metadata?: Record<string, string | number> | null;
}

/**
 * An organization's collections, and which of them a caller may reach: every one for a JWT or an
 * unlimited key, only its own for a key limited to collections (any other is a 404, like a missing one).
 */
@Injectable()
export class CollectionsService {
  constructor(
    private readonly dataSource: DataSource,
    private readonly collections: CollectionsRepository,
    private readonly purger: CollectionPurger,
  ) {}

  async list(caller: Principal, page: PageRequest): Promise<{ count: number; collections: CollectionWithCounts[] }> {
    const [collections, count] = await this.collections.page(caller.organizationId, caller.collectionIds ?? null, page);
    return { count, collections };
  }

  /** The collections the caller may reach, oldest first (at most COLLECTIONS_MAX). */
  reachableList(caller: Principal): Promise<Collection[]> {
    const limit = caller.collectionIds ?? null;
    return this.collections
      .list(caller.organizationId, COLLECTIONS_MAX)
      .then((all) => (limit === null ? all : all.filter((collection) => limit.includes(collection.id))));
  }

  async get(caller: Principal, id: string): Promise<CollectionWithCounts> {
    const resolved = this.idOf(caller, id);
    const found = reachable(caller, resolved)
      ? await this.collections.findCounted(caller.organizationId, resolved)
      : null;
    if (!found) throw NotFoundError.named('Collection', id);
    return found;
  }

  /** A key limited to collections cannot make one (it could not reach it). */
  /**
   * `within`: more work in the collection's transaction (a vector store's files), so an error of it
   * creates nothing.
   */
  async create(
    caller: Principal,
    input: CollectionInput,
    within?: (manager: EntityManager, collectionId: string) => Promise<void>,
  ): Promise<CollectionWithCounts> {
    if (caller.collectionIds) throw new PermissionDeniedError();
    // Composed (NFC), so a name differing only by its normalisation is the same name (the unique index).
    const name = input.name.normalize('NFC');
    const created = await this.named(name, () =>
      this.dataSource.transaction(async (manager) => {
        const count = await this.collections.lockAndCount(manager, caller.organizationId);
        if (count >= COLLECTIONS_MAX) throw new BadRequestError(tooManyCollections(COLLECTIONS_MAX));
        const inserted = await this.collections.insert(manager, {
          organizationId: caller.organizationId,
          name,
          description: input.description ?? null,
          metadata: input.metadata ?? {},
        });
        if (within) await within(manager, inserted.id);
        return inserted;
      }),
    );
    return this.get(caller, created.id);
  }

  async update(caller: Principal, id: string, update: Partial<CollectionInput>): Promise<CollectionWithCounts> {
    const changes = update.name === undefined ? update : { ...update, name: update.name.normalize('NFC') };
    const collection = await this.get(caller, id);
    if (changes.name !== undefined && changes.name !== collection.name && isDefaultCollection(collection))
      throw new ConflictError(DEFAULT_NOT_RENAMABLE);
    await this.named(changes.name ?? '', () =>
      this.dataSource.transaction((manager) =>
        this.collections.update(manager, collection.id, {
          ...(changes.name === undefined ? {} : { name: changes.name }),
          ...(changes.description === undefined ? {} : { description: changes.description }),
          ...(changes.metadata === undefined ? {} : { metadata: changes.metadata ?? {} }),
        }),
      ),
    );
    return this.get(caller, collection.id);
  }

  /** Deletes the collection, its documents, their chunks and its statistics, in one transaction. */
  async remove(caller: Principal, id: string): Promise<void> {
    const resolved = this.idOf(caller, id);
    if (!reachable(caller, resolved)) throw NotFoundError.named('Collection', id);
    await this.dataSource.transaction(async (manager) => {
      const collection = await this.collections.lock(manager, caller.organizationId, resolved);
      if (!collection) throw NotFoundError.named('Collection', id);
      if (isDefaultCollection(collection)) throw new ConflictError(DEFAULT_NOT_DELETABLE);
      // Out of every read when this commits; its documents go a batch at a time (CollectionPurger).
      await this.collections.markDeleted(manager, collection.id);
    });
    this.purger.wake();
  }

  /**
   * The collections a question asks: those named (each one the caller's and reachable, else a 404
   * naming it), or when none are named, `default`, or for a key limited to collections, all of its own.
   */
  async toAsk(caller: Principal, requested: readonly string[] | null | undefined): Promise<string[]> {
    if (requested === null || requested === undefined) {
      if (!caller.collectionIds) return [caller.organizationId];
      const own = caller.collectionIds;
      const existing = await this.collections.existing(caller.organizationId, own);
      const missing = own.find((id) => !existing.has(id));
      if (missing !== undefined) throw NotFoundError.named('Collection', missing);
      return [...own];
    }
    const ids: string[] = [];
    for (const name of requested) {
      const id = this.idOf(caller, name);
      if (!reachable(caller, id)) throw NotFoundError.named('Collection', name);
      if (!ids.includes(id)) ids.push(id);
    }
    const existing = await this.collections.existing(caller.organizationId, ids);
    const missing = requested.find((name) => !existing.has(this.idOf(caller, name)));
    if (missing !== undefined) throw NotFoundError.named('Collection', missing);
    return ids;
  }

  /**
   * The organization's collections named (`default` standing for its default one), in order without
   * repeats, or a 404 naming the first that is not one of them (an API key's `collection_ids`).
   */
  async ofOrganization(organizationId: string, requested: readonly string[]): Promise<string[]> {
    const idOf = (name: string) => (name === DEFAULT_COLLECTION_ALIAS ? organizationId : name.toLowerCase());
    const ids = [...new Set(requested.map(idOf))];
    const existing = await this.collections.existing(organizationId, ids.filter(isUuid));
    const missing = requested.find((name) => !existing.has(idOf(name)));
    if (missing !== undefined) throw NotFoundError.named('Collection', missing);
    return ids;
  }

  /**
   * The collection an upload goes into: the one named, or `default`, or for a key limited to
   * collections the first of its own. Unknown or unreachable: a 404 naming it.
   */
  async toWrite(caller: Principal, requested: string | null | undefined): Promise<string> {
    const name = requested ?? caller.collectionIds?.[0] ?? caller.organizationId;
    const id = this.idOf(caller, name);
    if (!reachable(caller, id) || !(await this.collections.existing(caller.organizationId, [id])).has(id))
      throw NotFoundError.named('Collection', name);
    return id;
  }

  /** The collection to list documents of, checked like `toWrite`; absent: every one `toAsk` would ask. */
  async toList(caller: Principal, requested: string | null | undefined): Promise<string[]> {
    return requested === null || requested === undefined
      ? this.toAsk(caller, null)
      : [await this.toWrite(caller, requested)];
  }

  /** The id a client's name for a collection stands for: `default` is the organization's; anything else, as given. */
  private idOf(caller: Principal, name: string): string {
    return name === DEFAULT_COLLECTION_ALIAS ? caller.organizationId : name.toLowerCase();
  }

  /** A duplicate name (the unique index, case-insensitive) is a 409. */
  private async named<T>(name: string, write: () => Promise<T>): Promise<T> {
    try {
      return await write();
    } catch (error) {
      if (isUniqueViolation(error)) throw new ConflictError(duplicateName(name));
      throw error;
    }
  }
}

/** Whether a caller may reach the collection `id` at all (a well-formed id, within a limited key's list). */
function reachable(caller: Principal, id: string): boolean {
  return isUuid(id) && (!caller.collectionIds || caller.collectionIds.includes(id));
}

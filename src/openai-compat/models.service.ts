import { Injectable } from '@nestjs/common';
import { CollectionsService, DEFAULT_COLLECTION_ALIAS } from '../collections/collections.service.js';
import { NotFoundError, ValidationFailedError } from '../common/errors.js';
import { isUuid } from '../common/validation.js';
import type { Principal } from '../common/principal.js';
import { KnowledgeBaseService } from '../query/knowledge-base.service.js';

/** The model that asks the organization's own documents; every other model is a public domain's slug. */
export const PRIVATE_MODEL = 'private';

/** The body of a ModelResponse. */
export interface Model {
  id: string;
  object: 'model';
  created: number;
  owned_by: 'organization' | 'public';
}

const unixSeconds = (date: Date | string) => Math.floor(new Date(date).getTime() / 1000);

/** The knowledge bases a caller may ask, as OpenAI lists models. */
@Injectable()
export class ModelsService {
  constructor(
    private readonly knowledgeBases: KnowledgeBaseService,
    private readonly collections: CollectionsService,
  ) {}

  /**
   * `private` first, then each collection the caller may reach (by id) but `default` (which `private`
   * asks: an organization without collections sees the list of the second edition), then the active
   * public domains the organization's `allowed_domains` let it ask.
   */
  async list(caller: Principal): Promise<Model[]> {
    const [{ organization, domains }, collections] = await Promise.all([
      this.knowledgeBases.askable(caller),
      this.collections.reachableList(caller),
    ]);
    return [
      { id: PRIVATE_MODEL, object: 'model', created: unixSeconds(organization.createdAt), owned_by: 'organization' },
      ...collections
        .filter((collection) => collection.id !== caller.organizationId)
        .map((collection) => ({
          id: collection.id,
          object: 'model' as const,
          created: unixSeconds(collection.createdAt),
          owned_by: 'organization' as const,
        })),
      ...domains
        .filter((domain) => domain.slug !== PRIVATE_MODEL)
        .map((domain) => ({
          id: domain.slug,
          object: 'model' as const,
          created: unixSeconds(domain.created_at),
          owned_by: 'public' as const,
        })),
    ];
  }

  async get(caller: Principal, id: string): Promise<Model> {
    const model = (await this.list(caller)).find((candidate) => candidate.id === id);
    if (!model) throw NotFoundError.named('Model', id);
    return model;
  }
}

/** The 400 of a completion naming collections with a model that is not `private`. */
export const COLLECTIONS_NEED_PRIVATE =
  'collection_ids goes with model "private": a model that names a collection or a public domain asks that one.';

/**
 * What a model asks: `private` the caller's default collections (`default`, or a limited key's own) or
 * the `collection_ids` given, a UUID or `default` that collection, anything else the public domain of that
 * slug (404 and 403 come from KnowledgeBaseService).
 */
export function knowledgeOfModel(
  model: string,
  collectionIds?: readonly string[] | null,
): { domain: string | null; collectionIds: readonly string[] | null } {
  const given = collectionIds ?? null;
  if (model === PRIVATE_MODEL) return { domain: null, collectionIds: given };
  if (given !== null) throw ValidationFailedError.field('collection_ids', COLLECTIONS_NEED_PRIVATE);
  if (isUuid(model) || model === DEFAULT_COLLECTION_ALIAS) return { domain: null, collectionIds: [model] };
  return { domain: model, collectionIds: null };
}

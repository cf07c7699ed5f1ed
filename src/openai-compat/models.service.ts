import { Injectable } from '@nestjs/common';
import { NotFoundError } from '../common/errors.js';
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
  constructor(private readonly knowledgeBases: KnowledgeBaseService) {}

  /** `private` first, then the active public domains the organization's `allowed_domains` let it ask. */
  async list(caller: Principal): Promise<Model[]> {
    const { organization, domains } = await this.knowledgeBases.askable(caller);
    return [
      { id: PRIVATE_MODEL, object: 'model', created: unixSeconds(organization.createdAt), owned_by: 'organization' },
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

/** The domain a model asks: null for `private`, else the slug (404 and 403 come from KnowledgeBaseService). */
export function domainOfModel(model: string): string | null {
  return model === PRIVATE_MODEL ? null : model;
}

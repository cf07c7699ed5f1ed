import { Injectable } from '@nestjs/common';
import { CollectionsService } from '../collections/collections.service.js';
import { DomainNotAllowedError, NotFoundError, ValidationFailedError } from '../common/errors.js';
import type { Principal } from '../common/principal.js';
import { DomainsService } from '../domains/domains.service.js';
import { OrganizationsService } from '../organizations/organizations.service.js';
import type { Corpus } from '../retrieval/retriever.js';
import type { DomainResponse } from '../domains/dto/domain.response.js';
import type { Organization } from '../organizations/organization.entity.js';

/** What an organization may ask: its private base, and the active public domains its `allowed_domains` let in. */
export interface AskableKnowledgeBases {
  organization: Organization;
  domains: DomainResponse[];
}

export interface KnowledgeBase {
  /** The public domain's slug, or null for the organization's private knowledge base. */
  domain: string | null;
  corpus: Corpus;
}

/** The 400 of a question naming both a public domain and collections. */
export const DOMAIN_WITH_COLLECTIONS = ValidationFailedError.field(
  'collection_ids',
  'Give either domain or collection_ids, not both: a question asks a public domain or your collections.',
);

/**
 * Where a question is asked: a public domain (404 unknown or inactive, then 403 not allowed), or
 * collections of the organization (404 unknown or out of the caller's reach; by default `default`, or
 * a limited key's own collections).
 */
@Injectable()
export class KnowledgeBaseService {
  constructor(
    private readonly domains: DomainsService,
    private readonly organizations: OrganizationsService,
    private readonly collections: CollectionsService,
  ) {}

  async resolve(
    caller: Principal,
    slug: string | null | undefined,
    collectionIds?: readonly string[] | null,
  ): Promise<KnowledgeBase> {
    const askingCollections = collectionIds !== null && collectionIds !== undefined;
    if (slug !== null && slug !== undefined && askingCollections) throw DOMAIN_WITH_COLLECTIONS;
    if (slug === null || slug === undefined) {
      return { domain: null, corpus: { collectionIds: await this.collections.toAsk(caller, collectionIds) } };
    }
    const domain = await this.domains.findActiveBySlug(slug.toLowerCase());
    // An inactive domain is as unknown as a missing one.
    if (!domain) throw NotFoundError.named('Domain', slug);
    const organization = await this.organizations.current(caller);
    if (organization.allowedDomains !== null && !organization.allowedDomains.includes(domain.slug)) {
      throw new DomainNotAllowedError();
    }
    return { domain: domain.slug, corpus: { domainId: domain.id } };
  }

  /** The knowledge bases `resolve` accepts for this caller (GET /v1/models, MCP's list_knowledge_bases). */
  async askable(caller: Principal): Promise<AskableKnowledgeBases> {
    const [organization, domains] = await Promise.all([
      this.organizations.current(caller),
      this.domains.list({ includeInactive: false }),
    ]);
    const allowed = organization.allowedDomains;
    return { organization, domains: domains.filter((domain) => allowed === null || allowed.includes(domain.slug)) };
  }
}

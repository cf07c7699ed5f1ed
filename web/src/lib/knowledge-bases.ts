import { domains, organizations } from '../api/endpoints';
import type { Domain, Organization } from '../api/types';
import { useResource } from './use-resource';

export interface KnowledgeBases {
  /** Every active public domain. */
  all: Domain[];
  /** Those the organization may query (its `allowed_domains`; null allows all). */
  allowed: Domain[];
  organization: Organization;
}

export function allowedDomains(all: Domain[], allowedSlugs: string[] | null): Domain[] {
  return all.filter((domain) => domain.is_active && (allowedSlugs === null || allowedSlugs.includes(domain.slug)));
}

export function useKnowledgeBases() {
  return useResource<KnowledgeBases>(async () => {
    const [all, organization] = await Promise.all([domains.list(), organizations.current()]);
    return { all, organization, allowed: allowedDomains(all, organization.allowed_domains) };
  }, []);
}

export function knowledgeBaseName(slug: string | null, all: Domain[] | undefined): string {
  if (!slug) return 'Private knowledge base';
  return all?.find((domain) => domain.slug === slug || domain.id === slug)?.name ?? slug;
}

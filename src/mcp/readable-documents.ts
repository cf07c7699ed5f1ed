import { Injectable } from '@nestjs/common';
import { NotFoundError } from '../common/errors.js';
import type { Principal } from '../common/principal.js';
import { isUuid } from '../common/validation.js';
import type { Document } from '../documents/document.entity.js';
import { DocumentsService } from '../documents/documents.service.js';
import { DomainsService } from '../domains/domains.service.js';
import { KnowledgeBaseService } from '../query/knowledge-base.service.js';

/**
 * The documents a caller may read whole: its organization's own (for a key limited to collections, those
 * of its collections), and those of the public domains it may
 * ask (active, within `allowed_domains`: the same 404 and 403 as asking the domain). Another
 * organization's document, an inactive domain's and a missing one are the same 404.
 */
@Injectable()
export class ReadableDocuments {
  constructor(
    private readonly documents: DocumentsService,
    private readonly domains: DomainsService,
    private readonly knowledgeBases: KnowledgeBaseService,
  ) {}

  /** `id`: a search result's (a passage's) id, or a document's. */
  async read(caller: Principal, id: string): Promise<Document> {
    const notFound = NotFoundError.named('Document', id);
    if (!isUuid(id)) throw notFound;
    const document = await this.documents.findByDocumentOrPassage(id.toLowerCase());
    if (!document) throw notFound;
    if (document.organizationId !== null) {
      if (document.organizationId !== caller.organizationId) throw notFound;
      // A key limited to collections reads only theirs (another collection's document is as missing).
      if (caller.collectionIds && !(document.collectionId && caller.collectionIds.includes(document.collectionId)))
        throw notFound;
      return document;
    }
    const domain = document.domainId ? await this.domains.findActiveById(document.domainId) : null;
    if (!domain) throw notFound;
    await this.knowledgeBases.resolve(caller, domain.slug);
    return document;
  }
}

import { InitialSchema1763700000000 } from './1763700000000-InitialSchema.js';
import { Knowledge1763700100000 } from './1763700100000-Knowledge.js';
import { BillingAndChat1763700200000 } from './1763700200000-BillingAndChat.js';
import { TokenLifecycle1763700310000 } from './1763700310000-TokenLifecycle.js';
import { IdempotencyKeys1763700400000 } from './1763700400000-IdempotencyKeys.js';
import { PartnerKeys1763700410000 } from './1763700410000-PartnerKeys.js';
import { LocatedPassages1763700430000 } from './1763700430000-LocatedPassages.js';
import { UsageByKey1763700440000 } from './1763700440000-UsageByKey.js';
import { RankingTuning1763700450000 } from './1763700450000-RankingTuning.js';
import { SearchVectorsInline1763700460000 } from './1763700460000-SearchVectorsInline.js';
import { IdempotencyBudget1795723156529 } from './1795723156529-IdempotencyBudget.js';
import { KeyLineages1795723595478 } from './1795723595478-KeyLineages.js';
import { ActiveKeysByOrganization1795723595479 } from './1795723595479-ActiveKeysByOrganization.js';
import { MetadataInline1795723807393 } from './1795723807393-MetadataInline.js';
import { Webhooks1795725638525 } from './1795725638525-Webhooks.js';
import { Teams1795734599789 } from './1795734599789-Teams.js';
import { Collections1795734606595 } from './1795734606595-Collections.js';
import { VectorStoreFiles1795735918586 } from './1795735918586-VectorStoreFiles.js';
import { ReachOfSessionsAndFiles1795738079147 } from './1795738079147-ReachOfSessionsAndFiles.js';
import { FilesStorage1795741185882 } from './1795741185882-FilesStorage.js';
import { AttachQueue1795746017023 } from './1795746017023-AttachQueue.js';
import { AttachStorage1795746666273 } from './1795746666273-AttachStorage.js';
import { CollectionDeletion1795747714248 } from './1795747714248-CollectionDeletion.js';
import { AttachQueueByOrganization1795750000000 } from './1795750000000-AttachQueueByOrganization.js';

/** Every migration, oldest first. Listed explicitly so the build, the CLI and Jest load the same set. */
export const migrations = [
  InitialSchema1763700000000,
  Knowledge1763700100000,
  BillingAndChat1763700200000,
  TokenLifecycle1763700310000,
  IdempotencyKeys1763700400000,
  PartnerKeys1763700410000,
  LocatedPassages1763700430000,
  UsageByKey1763700440000,
  RankingTuning1763700450000,
  SearchVectorsInline1763700460000,
  IdempotencyBudget1795723156529,
  KeyLineages1795723595478,
  ActiveKeysByOrganization1795723595479,
  MetadataInline1795723807393,
  Webhooks1795725638525,
  Teams1795734599789,
  Collections1795734606595,
  VectorStoreFiles1795735918586,
  ReachOfSessionsAndFiles1795738079147,
  FilesStorage1795741185882,
  AttachQueue1795746017023,
  AttachStorage1795746666273,
  CollectionDeletion1795747714248,
  AttachQueueByOrganization1795750000000,
];

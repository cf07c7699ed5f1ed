import { ApiKey } from '../api-keys/api-key.entity.js';
import { Subscription } from '../billing/subscription.entity.js';
import { UsageEvent } from '../billing/usage-event.entity.js';
import { ChatMessage } from '../chat/chat-message.entity.js';
import { ChatSession } from '../chat/chat-session.entity.js';
import { RefreshToken } from '../auth/refresh-token.entity.js';
import { User } from '../auth/user.entity.js';
import { Document } from '../documents/document.entity.js';
import { Domain } from '../domains/domain.entity.js';
import { Region } from '../domains/region.entity.js';
import { Organization } from '../organizations/organization.entity.js';

export const entities = [Organization, User, RefreshToken, ApiKey, Subscription, UsageEvent, Region, Domain, Document, ChatSession, ChatMessage];

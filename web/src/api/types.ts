export interface User {
  id: string;
  email: string;
  is_admin: boolean;
  organization_id: string;
}

export interface ApiKey {
  id: string;
  name: string;
  key_prefix: string;
  is_active: boolean;
  last_used_at: string | null;
  created_at: string;
  expires_at: string | null;
  key?: string;
  rotated_from?: string;
}

export interface Quota {
  credits_total: number;
  credits_used: number;
  credits_remaining: number;
  period_start: string;
  period_end: string;
}

export interface Subscription {
  plan: string;
  current_quota: Quota;
}

export interface DailyUsage {
  date: string;
  credits: number;
}

export interface Organization {
  id: string;
  name: string;
  allowed_domains: string[] | null;
  created_at: string;
}

export interface Domain {
  id: string;
  name: string;
  slug: string;
  description: string | null;
  region: string | null;
  is_active: boolean;
  created_at: string;
}

export interface Page<T> {
  count: number;
  next: string | null;
  previous: string | null;
  results: T[];
}

export interface Source {
  document_id: string;
  chunk_id: string;
  title: string;
  snippet: string;
  score: number;
  metadata: Record<string, string | number> | null;
}

export interface ChatMessage {
  id: string;
  role: 'user' | 'assistant';
  content: string;
  sources: Source[] | null;
  created_at: string;
}

export interface ChatSession {
  id: string;
  title: string | null;
  domain: string | null;
  created_at: string;
  updated_at: string;
}

export interface ChatSessionWithMessages extends ChatSession {
  messages: ChatMessage[];
}

export interface DocumentRecord {
  id: string;
  title: string;
  metadata: Record<string, string | number> | null;
  content_type: string;
  size_bytes: number;
  chunk_count: number;
  created_at: string;
}

import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

/**
 * Every Prometheus metric of the service, in one registry served at GET /metrics. Other modules
 * import the counters they feed (e.g. `creditsSpent.inc({ kind: 'query' }, cost)`).
 */
export const registry = new Registry();
collectDefaultMetrics({ register: registry });

const httpRequests = new Counter({
  name: 'http_requests_total',
  help: 'HTTP requests answered, by method, route pattern and status code.',
  labelNames: ['method', 'route', 'status'] as const,
  registers: [registry],
});

const httpRequestDuration = new Histogram({
  name: 'http_request_duration_seconds',
  help: 'Time from the first byte of a request to the end of its response, by method, route pattern and status code.',
  labelNames: ['method', 'route', 'status'] as const,
  buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
  registers: [registry],
});

/** Per route and status, the counter and histogram children: prom-client hashes a label set on every call. */
type HttpLabel = 'method' | 'route' | 'status';
const httpSeries = new Map<string, { count: Counter.Internal; duration: Histogram.Internal<HttpLabel> }>();

/** Counts one answered request and its duration (seconds) under its route pattern and status. */
export function observeHttpRequest(method: string, route: string, status: string, seconds: number): void {
  const key = `${method} ${status} ${route}`;
  let series = httpSeries.get(key);
  if (!series) {
    series = {
      count: httpRequests.labels(method, route, status),
      duration: httpRequestDuration.labels(method, route, status),
    };
    httpSeries.set(key, series);
  }
  series.count.inc();
  series.duration.observe(seconds);
}

/** Requests in flight, read when Prometheus scrapes (set by the HTTP observer) rather than on every request. */
let inFlightSource: (() => number) | null = null;
export function watchRequestsInFlight(source: () => number): void {
  inFlightSource = source;
}

new Gauge({
  name: 'http_requests_in_flight',
  help: 'Requests received and not yet answered.',
  registers: [registry],
  collect() {
    if (inFlightSource) this.set(inFlightSource());
  },
});

export const apiKeyVerifications = new Counter({
  name: 'kqs_api_key_verifications_total',
  help: 'API keys presented on authenticated routes, by outcome: valid, invalid (401), error (e.g. database down).',
  labelNames: ['outcome'] as const,
  registers: [registry],
});

export const jwtVerifications = new Counter({
  name: 'kqs_jwt_verifications_total',
  help: 'JWT access tokens presented on authenticated routes, by outcome: valid, invalid (401), error.',
  labelNames: ['outcome'] as const,
  registers: [registry],
});

/** Incremented by billing whenever a metered request spends credits. */
export const creditsSpent = new Counter({
  name: 'kqs_credits_spent_total',
  help: 'Credits spent, by kind of metered request (query, chat).',
  labelNames: ['kind'] as const,
  registers: [registry],
});

/** Incremented by the webhook workers after each delivery attempt. */
export const webhookDeliveries = new Counter({
  name: 'kqs_webhook_deliveries_total',
  help: 'Webhook delivery attempts, by outcome: delivered, retry (failed, another attempt scheduled), failed (no attempt left, or 410).',
  labelNames: ['outcome'] as const,
  registers: [registry],
});

export const rateLimited = new Counter({
  name: 'kqs_rate_limited_total',
  help: 'Requests refused with 429, by limit: principal or organization (requests per minute), sign_in (failed sign-ins), address_* (per client address).',
  labelNames: ['limit'] as const,
  registers: [registry],
});

/** The database pool in use, read when Prometheus scrapes (set by the observability module). */
export interface PoolLike {
  totalCount: number;
  idleCount: number;
  waitingCount: number;
  options?: { max?: number };
}
let poolSource: (() => PoolLike | null) | null = null;
export function watchDatabasePool(source: (() => PoolLike | null) | null): void {
  poolSource = source;
}

new Gauge({
  name: 'kqs_db_pool_connections',
  help: 'Database pool connections by state: total (open), idle, busy, waiting (callers queued for one), max.',
  labelNames: ['state'] as const,
  registers: [registry],
  collect() {
    const pool = poolSource?.();
    if (!pool) return;
    this.set({ state: 'total' }, pool.totalCount);
    this.set({ state: 'idle' }, pool.idleCount);
    this.set({ state: 'busy' }, pool.totalCount - pool.idleCount);
    this.set({ state: 'waiting' }, pool.waitingCount);
    if (pool.options?.max !== undefined) this.set({ state: 'max' }, pool.options.max);
  },
});

/**
 * Counts the outcome of a credential check made by the auth guard, and passes its result through.
 * A 401 is `invalid`; anything else that fails (the database is down, say) is `error`.
 */
export async function observeCredential<T>(kind: 'api_key' | 'jwt', check: Promise<T>): Promise<T> {
  const counter = kind === 'api_key' ? apiKeyVerifications : jwtVerifications;
  try {
    const result = await check;
    counter.inc({ outcome: 'valid' });
    return result;
  } catch (error) {
    counter.inc({ outcome: (error as { status?: number }).status === 401 ? 'invalid' : 'error' });
    throw error;
  }
}

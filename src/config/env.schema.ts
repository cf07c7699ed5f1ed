import { isIP } from 'node:net';
import { Transform, plainToInstance } from 'class-transformer';
import {
  IsBoolean,
  IsEmail,
  IsIn,
  IsInt,
  IsOptional,
  IsString,
  IsUrl,
  Max,
  Min,
  MinLength,
  ValidateBy,
  validateSync,
} from 'class-validator';

const toInt = ({ value }: { value: unknown }) => (value === undefined || value === '' ? undefined : Number(value));
const toBool = ({ value }: { value?: string }) => {
  if (value === undefined || value === '') return undefined;
  const text = value.toLowerCase();
  if (['true', '1', 'yes'].includes(text)) return true;
  if (['false', '0', 'no'].includes(text)) return false;
  return value;
};
const parseOriginList = (value: string) =>
  value
    .split(',')
    .map((origin) => origin.trim())
    .filter((origin) => origin !== '');

/** `https://app.example.com` or `http://localhost:5173`: what a browser sends as `Origin`, nothing more. */
function isExactOrigin(origin: string): boolean {
  if (!URL.canParse(origin)) return false;
  const url = new URL(origin);
  // WHATWG URLs accept `*` in a host name; an origin never has one.
  const plainHost = /^[a-z0-9.-]+$|^\[[0-9a-f:.]+\]$/i.test(url.hostname);
  return (url.protocol === 'https:' || url.protocol === 'http:') && url.origin === origin && plainHost;
}

/** A list of exact origins; `*` (any site with a user's token) and URLs with paths are refused. */
const IsOriginList = () =>
  ValidateBy({
    name: 'isOriginList',
    validator: {
      validate: (value: unknown) =>
        Array.isArray(value) && value.every((origin) => typeof origin === 'string' && isExactOrigin(origin)),
      defaultMessage: (args) => {
        const bad: unknown = (Array.isArray(args?.value) ? args.value : [args?.value]).find(
          (origin) => !isExactOrigin(String(origin)),
        );
        return `must be a comma-separated list of exact origins such as https://app.example.com (no "*", path or trailing slash); "${String(bad)}" is not one`;
      },
    },
  });

/** The names proxy-addr (behind Fastify's `trustProxy`) knows for whole ranges. */
const PROXY_RANGE_NAMES = ['loopback', 'linklocal', 'uniquelocal'];

/** An address, an address/prefix (CIDR) or one of proxy-addr's range names. */
function isProxyAddress(entry: string): boolean {
  if (PROXY_RANGE_NAMES.includes(entry)) return true;
  const parts = entry.split('/');
  const family = isIP(parts[0]);
  if (family === 0 || parts.length > 2) return false;
  if (parts.length === 1) return true;
  return /^\d{1,3}$/.test(parts[1]) && Number(parts[1]) <= (family === 4 ? 32 : 128);
}

/**
 * The widest proxy ranges believed: IPv4 10.0.0.0/8 and IPv6 fc00::/7 (`uniquelocal`). Wider ones
 * (0.0.0.0/1 with 128.0.0.0/1, ::/0…) trust most of the Internet, as `true` does; a /0 also passed
 * validation and then crashed the boot inside proxy-addr.
 */
const WIDEST_PROXY_PREFIX = { 4: 8, 6: 7 } as const;

/** An entry whose prefix is wider than WIDEST_PROXY_PREFIX (IPv4-mapped IPv6 counted as IPv4). */
function isTooWideProxyRange(entry: string): boolean {
  const parts = entry.split('/');
  if (parts.length !== 2 || !isProxyAddress(entry)) return false;
  const [address, prefix] = parts;
  const mapped = /^::ffff:/i.test(address) && isIP(address) === 6;
  if (mapped) return Number(prefix) - 96 < WIDEST_PROXY_PREFIX[4];
  return Number(prefix) < WIDEST_PROXY_PREFIX[isIP(address) === 4 ? 4 : 6];
}

/**
 * `false`, a hop count, or a comma-separated list of proxy addresses/CIDRs. `true` is refused: it
 * believes the X-Forwarded-For of any peer, so every client could pick the address the per-address
 * limits count and the audit log records.
 */
const IsTrustProxy = () =>
  ValidateBy({
    name: 'isTrustProxy',
    validator: {
      validate: (value: unknown) => {
        if (typeof value !== 'string') return false;
        const text = value.trim();
        if (text === '' || text === 'false' || /^\d+$/.test(text)) return true;
        const entries = text.split(',').map((entry) => entry.trim());
        return entries.every(isProxyAddress) && !entries.some(isTooWideProxyRange);
      },
      defaultMessage: (args) => {
        const text = String(args?.value).trim();
        if (text.toLowerCase() === 'true')
          return 'true would believe the X-Forwarded-For header of any client (each could choose its own address); set the number of proxies in front of the service (e.g. 1) or their addresses/CIDRs (e.g. 10.0.0.0/8, or loopback)';
        const wide = text
          .split(',')
          .map((entry) => entry.trim())
          .find(isTooWideProxyRange);
        if (wide !== undefined)
          return `${wide} is wider than /8 (IPv4) or /7 (IPv6): it would believe the X-Forwarded-For header of most clients (each could choose its own address); name the proxies' own addresses or subnet`;
        return 'must be false, a number of proxy hops (e.g. 1), or a comma-separated list of proxy addresses/CIDRs (e.g. 10.0.0.0/8, 192.168.1.10, loopback)';
      },
    },
  });

const blankToUndefined = ({ value }: { value: unknown }) => (value === '' ? undefined : value);

/** Every environment variable the service reads, with its default. Validated once at boot. */
export class EnvSchema {
  @IsIn(['development', 'production', 'test'])
  NODE_ENV: 'development' | 'production' | 'test' = 'development';

  @Transform(toInt)
  @IsInt()
  @Min(0)
  @Max(65535)
  PORT = 3000;

  /** Serve GET /metrics on this port only, not on PORT (unset: on PORT, as before). */
  @Transform(toInt)
  @IsOptional()
  @IsInt()
  @Min(0)
  @Max(65535)
  METRICS_PORT?: number;

  @Transform(blankToUndefined)
  @IsOptional()
  @IsUrl(
    { protocols: ['postgres', 'postgresql'], require_tld: false, require_protocol: true },
    { message: 'must be a postgres:// URL' },
  )
  DATABASE_URL?: string;

  @IsString()
  @MinLength(1)
  DATA_DIR = './data';

  /** With NODE_ENV=production and no DATABASE_URL: run one instance on the embedded store anyway. */
  @Transform(toBool)
  @IsBoolean()
  EMBEDDED_STORE_IN_PRODUCTION = false;

  @Transform(blankToUndefined)
  @IsOptional()
  @IsString()
  JWT_SECRET?: string;

  // Any positive lifetime: operators shorten them in staging and tests (configWarnings flags < 60 s).
  @Transform(toInt)
  @IsInt()
  @Min(1)
  JWT_ACCESS_TTL_SECONDS = 1800;

  @Transform(toInt)
  @IsInt()
  @Min(1)
  JWT_REFRESH_TTL_SECONDS = 2592000;

  @Transform(blankToUndefined)
  @IsOptional()
  @IsEmail({}, { message: 'must be an e-mail address' })
  ADMIN_EMAIL?: string;

  @Transform(blankToUndefined)
  @IsOptional()
  @IsString()
  @MinLength(8)
  ADMIN_PASSWORD?: string;

  /** Whether ADMIN_EMAIL may promote an account that already exists as an ordinary one (ending its sessions). */
  @Transform(toBool)
  @IsBoolean()
  ADMIN_PROMOTE_EXISTING = false;

  @Transform(toBool)
  @IsBoolean()
  ALLOW_SIGNUP = true;

  @Transform(toInt)
  @IsInt()
  @Min(0)
  DEFAULT_MONTHLY_CREDITS = 1000;

  @Transform(toInt)
  @IsInt()
  @Min(0)
  QUERY_CREDIT_COST = 1;

  /** Credits a `POST /v1/search/` costs (retrieval only); 0 leaves searches unmetered. */
  @Transform(toInt)
  @IsInt()
  @Min(0)
  SEARCH_CREDIT_COST = 0;

  @Transform(toInt)
  @IsInt()
  @Min(1)
  RATE_LIMIT_PER_MINUTE = 1200;

  /** The most requests per minute an API key's own `rate_limit_per_minute` may ask for (400 beyond). */
  @Transform(toInt)
  @IsInt()
  @Min(1)
  @Max(1_000_000)
  KEY_RATE_LIMIT_MAX_PER_MINUTE = 6000;

  /** Requests per minute of one organization, all its keys and users together (429 beyond). */
  @Transform(toInt)
  @IsInt()
  @Min(1)
  ORG_RATE_LIMIT_PER_MINUTE = 12_000;

  /** Active API keys one organization may hold (a create beyond is a 400; a rotation is never refused). */
  @Transform(toInt)
  @IsInt()
  @Min(1)
  @Max(100_000)
  MAX_ACTIVE_KEYS_PER_ORG = 100;

  /** Per client address, before authentication: sign-ups per hour (each costs an argon2 hash and rows). */
  @Transform(toInt)
  @IsInt()
  @Min(1)
  SIGNUP_LIMIT_PER_HOUR = 30;

  /** Sign-in attempts per address per minute, right or wrong (failures have their own limits too). */
  @Transform(toInt)
  @IsInt()
  @Min(1)
  SIGNIN_LIMIT_PER_MINUTE = 60;

  /** Refresh, verify and logout calls per address per minute. */
  @Transform(toInt)
  @IsInt()
  @Min(1)
  TOKEN_LIMIT_PER_MINUTE = 300;

  /** Invalid API keys and JWTs per address per minute; past it the address gets 429 until the minute ends. */
  @Transform(toInt)
  @IsInt()
  @Min(1)
  FAILED_AUTH_LIMIT_PER_MINUTE = 60;

  /** Password hashes (argon2id, 19 MiB each) computed at once; others wait their turn. */
  @Transform(toInt)
  @IsInt()
  @Min(1)
  @Max(64)
  PASSWORD_HASH_CONCURRENCY = 2;

  /** When true, POST /auth/jwt/refresh/ also returns a new refresh token and revokes the one sent. */
  @Transform(toBool)
  @IsBoolean()
  JWT_ROTATE_REFRESH_TOKENS = false;

  @Transform(blankToUndefined)
  @IsOptional()
  @IsUrl(
    { protocols: ['redis', 'rediss'], require_tld: false, require_protocol: true },
    { message: 'must be a redis:// URL' },
  )
  REDIS_URL?: string;

  /** Largest accepted request body. */
  @Transform(toInt)
  @IsInt()
  @Min(1024)
  MAX_BODY_BYTES = 1_048_576;

  /**
   * Bytes of stored answers one organization may hold for `Idempotency-Key` replays (24 hours each);
   * past it, a new key is refused (429) before its request runs.
   */
  @Transform(toInt)
  @IsInt()
  @Min(1)
  IDEMPOTENCY_ORG_BUDGET_MB = 64;

  /**
   * Bytes of files (`POST /v1/files`) one organization may keep stored, in MB; past it an upload is
   * refused (400) and nothing is stored, until files are deleted.
   */
  @Transform(toInt)
  @IsInt()
  @Min(1)
  FILES_STORAGE_MB_PER_ORGANIZATION = 1024;

  /** The largest answer kept for a replay; a larger one is sent once and its replay refused (410). */
  @Transform(toInt)
  @IsInt()
  @Min(1)
  IDEMPOTENCY_MAX_ANSWER_KB = 256;

  /**
   * Largest metadata of one document, in bytes of its JSON (UTF-8): a search's filter reads it for
   * each candidate document. Applies to every route that stores a document (400 naming `metadata`).
   */
  @Transform(toInt)
  @IsInt()
  @Min(256)
  @Max(1_048_576)
  DOCUMENT_METADATA_MAX_BYTES = 8192;

  /**
   * Searches (search, query, chat, completions) an instance runs at once, all organizations together;
   * each holds a connection of the search pool (apart from DATABASE_POOL_SIZE's) and a database core
   * while it ranks. A freed turn goes to the waiting organization with the fewest searches running
   * (SearchGate), so one tenant's backlog delays another's next search by at most one search; while
   * another organization is active, one organization runs at most SEARCHES_AT_ONCE − 1 (at least 1).
   */
  @Transform(toInt)
  @IsInt()
  @Min(1)
  @Max(100)
  SEARCHES_AT_ONCE = 2;

  /**
   * Searches one organization runs at once on an instance (within SEARCHES_AT_ONCE); the next ones
   * wait their turn.
   */
  @Transform(toInt)
  @IsInt()
  @Min(1)
  @Max(100)
  SEARCHES_PER_ORGANIZATION = 5;

  /**
   * The share of the time (percent) an organization may hold a search turn while a light one (within
   * its share) is active on the instance: a search that took d ms is followed by a rest of
   * d × (100 − share) / share ms (at most a second) before the organization's next (SearchGate), so a
   * flooder leaves the cores to the light organization's requests. 100: no rests. 20 rather than 33
   * since the pools keep their connections: the quiet tenant's p99 within 1.5 × in the first two long
   * runs at 20 (three figures of six at 33), though not in two runs of a later day, nor at 10
   * (docs/BENCHMARKS.md, "Connections kept" and the section after it).
   */
  @Transform(toInt)
  @IsInt()
  @Min(1)
  @Max(100)
  SEARCH_TURN_SHARE_PERCENT = 20;

  /**
   * How much rest (ms) an organization that is not heavy may owe and still start its next search at
   * once: the rest is a bucket, and only what exceeds this is waited out. Without it, one search of a
   * reader's slowed by another tenant's (60 ms instead of 6) made the reader wait before its next
   * while any other light organization was active: a neighbour searching twice a second took the
   * reader's search p99 to 2.3 × its own alone (docs/BENCHMARKS.md, *A neighbour as busy as the
   * reader*). A heavy organization (see SearchGate) waits out all of its rest, and the one heavy
   * organizations share: a flood holds its share exactly. 0: every rest owed is waited out. At most
   * 500, half the longest rest (a second): at a second nothing would ever be overdue, and no flooder
   * would rest or be counted heavy.
   */
  @Transform(toInt)
  @IsInt()
  @Min(0)
  @Max(500)
  SEARCH_REST_ALLOWANCE_MS = 250;

  /**
   * Searches of one organization that may wait for a turn on an instance; more are refused (429,
   * Retry-After). Large: a waiting search holds no connection, and a burst of a few hundred queries
   * must still be answered 200 or 402, never 429 (the contract's exact caps under concurrency).
   */
  @Transform(toInt)
  @IsInt()
  @Min(0)
  @Max(100_000)
  SEARCH_QUEUE_PER_ORGANIZATION = 1000;

  /**
   * Searches that may wait for a turn on an instance, all organizations together: each holds its
   * request in memory (up to about 100 KB with the largest filter). Past it, a search of an
   * organization that already has some waiting is refused like one past its own queue (429); an
   * organization with none waiting may always queue one.
   */
  @Transform(toInt)
  @IsInt()
  @Min(1)
  @Max(1_000_000)
  SEARCH_QUEUE_TOTAL = 1500;

  /** Largest accepted document upload (multipart `file`). */
  @Transform(toInt)
  @IsInt()
  @Min(1)
  MAX_UPLOAD_BYTES = 10_485_760;

  /**
   * Multipart document uploads one instance reads at once; more get a 503. Each holds its file in
   * the temporary directory (spooled for the extraction worker) and its text and chunks in memory.
   */
  @Transform(toInt)
  @IsInt()
  @Min(1)
  @Max(1000)
  MAX_UPLOADS_IN_FLIGHT = 4;

  /**
   * Files attached to vector stores that this instance indexes at once (each also holds one of
   * MAX_UPLOADS_IN_FLIGHT while it does); the others wait in the queue, `in_progress`. 0 turns this
   * instance's attach workers off (another instance indexes them).
   */
  @Transform(toInt)
  @IsInt()
  @Min(0)
  @Max(32)
  ATTACH_WORKERS = 2;

  /**
   * Worker processes that extract and chunk documents (off the event loop). Each is stopped past
   * EXTRACTION_MEMORY_MB + 128 MB resident (read every 25 ms, so it may pass that by what it allocates
   * in 25 ms); one worker keeps a 512 MiB pod safe.
   */
  @Transform(toInt)
  @IsInt()
  @Min(1)
  @Max(64)
  EXTRACTION_WORKERS = 1;

  /**
   * Limit for reading one document, in the extraction worker's CPU time: past it the file is refused
   * (400). Wall-clock time where /proc does not tell a process's CPU time.
   */
  @Transform(toInt)
  @IsInt()
  @Min(100)
  @Max(600_000)
  EXTRACTION_TIMEOUT_MS = 30_000;

  /**
   * Wall-clock limit for reading one document (at least EXTRACTION_TIMEOUT_MS): a worker that has not
   * used its CPU time by then (the machine busy with other work) is stopped, and the upload answered
   * 503 (retry later) rather than refused. Keep it under the proxy's read timeout in front.
   */
  @Transform(toInt)
  @IsInt()
  @Min(100)
  @Max(1_200_000)
  EXTRACTION_WALL_TIMEOUT_MS = 60_000;

  /**
   * Heap limit of each extraction worker (MB), and with 128 MB more its resident limit; a file that
   * needs more is refused (400).
   */
  @Transform(toInt)
  @IsInt()
  @Min(32)
  @Max(4096)
  EXTRACTION_MEMORY_MB = 96;

  /** The built dashboard (`npm run build`); unset, `web/dist` in the checkout. Served at /app/. */
  @Transform(blankToUndefined)
  @IsOptional()
  @IsString()
  DASHBOARD_DIR?: string;

  /** Webhooks: lifts the URL rules (http allowed, private and loopback addresses allowed). Development and tests only. */
  @Transform(toBool)
  @IsBoolean()
  WEBHOOK_ALLOW_PRIVATE_URLS = false;

  /**
   * Webhooks: the key that encrypts endpoint secrets at rest (AES-256-GCM), 32 bytes in base64. Unset,
   * a key derived from JWT_SECRET (or, without one, a random key kept under DATA_DIR). Every instance
   * must have the same one.
   */
  @Transform(blankToUndefined)
  @IsOptional()
  @ValidateBy({
    name: 'isBase64Key32',
    validator: {
      validate: (value: unknown) =>
        typeof value === 'string' && /^[A-Za-z0-9+/]+={0,2}$/.test(value) && Buffer.from(value, 'base64').length === 32,
      defaultMessage: () => 'must be 32 bytes in base64 (e.g. `openssl rand -base64 32`)',
    },
  })
  WEBHOOK_SECRET_KEY?: string;

  /** Webhooks: the limit for one delivery attempt, connection to answer (the contract's 10 seconds). */
  @Transform(toInt)
  @IsInt()
  @Min(100)
  @Max(60_000)
  WEBHOOK_TIMEOUT_MS = 10_000;

  /** Webhooks: how often each instance looks for due deliveries (a first attempt starts within 5 s). */
  @Transform(toInt)
  @IsInt()
  @Min(10)
  @Max(5_000)
  WEBHOOK_POLL_INTERVAL_MS = 1_000;

  /** Webhooks: deliveries one instance sends at once. 0 turns this instance's delivery workers off. */
  @Transform(toInt)
  @IsInt()
  @Min(0)
  @Max(200)
  WEBHOOK_DELIVERY_CONCURRENCY = 16;

  /** Webhooks: days an event and its deliveries are kept once settled (the deliveries list shows them). */
  @Transform(toInt)
  @IsInt()
  @Min(1)
  @Max(3650)
  WEBHOOK_RETENTION_DAYS = 30;

  /** Webhooks: endpoints per organization (the contract's 20; the next one is a 400). */
  @Transform(toInt)
  @IsInt()
  @Min(1)
  @Max(1000)
  WEBHOOK_MAX_ENDPOINTS = 20;

  /** How often buffered API-key `last_used_at` stamps are written (the contract allows up to 60 s of lag). */
  @Transform(toInt)
  @IsInt()
  @Min(10)
  @Max(60_000)
  LAST_USED_FLUSH_MS = 10_000;

  @Transform(toInt)
  @IsInt()
  @Min(1)
  @Max(200)
  DATABASE_POOL_SIZE = 10;

  /**
   * How long a connection of the pools may take to open (or to be handed over when all are busy)
   * before the request fails: short, so that requests do not queue behind an unreachable database.
   * The migration lock's and the key-change listener's connections open within it too.
   */
  @Transform(toInt)
  @IsInt()
  @Min(100)
  @Max(60_000)
  DATABASE_CONNECT_TIMEOUT_MS = 3000;

  @Transform(toBool)
  @IsBoolean()
  MIGRATIONS_RUN = true;

  /** An OpenAI-compatible chat-completions endpoint; unset, answers are extractive (no model). */
  @Transform(blankToUndefined)
  @IsOptional()
  @IsUrl(
    { protocols: ['http', 'https'], require_tld: false, require_protocol: true },
    { message: 'must be an http(s) URL' },
  )
  LLM_BASE_URL?: string;

  @Transform(blankToUndefined)
  @IsOptional()
  @IsString()
  LLM_API_KEY?: string;

  @IsString()
  @MinLength(1)
  LLM_MODEL = 'gpt-4o-mini';

  @Transform(toInt)
  @IsInt()
  @Min(100)
  @Max(600_000)
  LLM_TIMEOUT_MS = 30_000;

  @IsIn(['fatal', 'error', 'warn', 'info', 'debug', 'silent'])
  LOG_LEVEL = 'info';

  /** Prefix of every Redis key the service writes (several deployments can share one Redis). */
  @IsString()
  @MinLength(1)
  REDIS_KEY_PREFIX = 'kqs:';

  /** After SIGTERM, keep accepting requests this long (readiness already 503) so load balancers move away. */
  @Transform(toInt)
  @IsInt()
  @Min(0)
  @Max(120_000)
  SHUTDOWN_DELAY_MS = 0;

  /** Then at most this long for requests in flight to finish before their connections are cut. */
  @Transform(toInt)
  @IsInt()
  @Min(0)
  @Max(600_000)
  SHUTDOWN_GRACE_MS = 10_000;

  /** Browser origins allowed to call the API (CORS): a comma-separated list of exact origins; empty = none. */
  @Transform(({ value }: { value: unknown }) => (typeof value === 'string' ? parseOriginList(value) : value))
  @IsOriginList()
  CORS_ORIGINS: readonly string[] = [];

  /**
   * Fastify's `trustProxy`: which proxies may set X-Forwarded-For (the client address of the
   * per-address limits and the audit log): `false`, a hop count, or proxy addresses/CIDRs; never `true`.
   */
  @IsTrustProxy()
  TRUST_PROXY = 'false';
}

export type AppConfig = Readonly<EnvSchema>;

/** Settings that are allowed but unusual enough to say so in the log at boot. */
export function configWarnings(config: AppConfig): string[] {
  const warnings: string[] = [];
  for (const name of ['JWT_ACCESS_TTL_SECONDS', 'JWT_REFRESH_TTL_SECONDS'] as const) {
    if (config[name] < 60)
      warnings.push(`${name}=${config[name]}: tokens expire in under a minute; fine for tests, not for users`);
  }
  return warnings;
}

export class ConfigError extends Error {}

/** Reads and validates the environment; throws a ConfigError naming each bad variable. */
export function loadConfig(env: Record<string, string | undefined> = process.env): AppConfig {
  const known = Object.keys(new EnvSchema());
  const raw = Object.fromEntries(
    Object.entries(env).filter(([name]) => known.includes(name) || name === 'DATABASE_URL'),
  );
  const config = plainToInstance(EnvSchema, raw, { exposeDefaultValues: true });
  const problems = validateSync(config, { skipMissingProperties: false }).map(
    (error) => `${error.property}: ${Object.values(error.constraints ?? {}).join('; ')}`,
  );
  // Half an administrator is a typo, not a choice: without this the boot would silently skip it.
  if (config.ADMIN_EMAIL && !config.ADMIN_PASSWORD) problems.push('ADMIN_PASSWORD: must be set when ADMIN_EMAIL is');
  if (config.ADMIN_PASSWORD && !config.ADMIN_EMAIL) problems.push('ADMIN_EMAIL: must be set when ADMIN_PASSWORD is');
  if (config.METRICS_PORT && config.METRICS_PORT === config.PORT) problems.push('METRICS_PORT: must differ from PORT');
  // In production the embedded store is a trap: one private copy of the data per pod, gone with the pod.
  if (config.NODE_ENV === 'production' && !config.DATABASE_URL && !config.EMBEDDED_STORE_IN_PRODUCTION) {
    problems.push(
      "DATABASE_URL: must be set when NODE_ENV=production (the embedded store is one process's own data on its own disk); " +
        'set EMBEDDED_STORE_IN_PRODUCTION=true to run a single instance on it anyway',
    );
  }
  if (config.NODE_ENV === 'production' && Buffer.byteLength(config.JWT_SECRET ?? '') < 32) {
    problems.push('JWT_SECRET: must be set to at least 32 bytes when NODE_ENV=production');
  }
  if (problems.length > 0) throw new ConfigError(`Invalid configuration: ${problems.join(', ')}`);
  return Object.freeze(config);
}

/** For entry points: the configuration, or null after printing what is wrong (the caller exits 1). */
export function loadConfigOrReport(env: Record<string, string | undefined> = process.env): AppConfig | null {
  try {
    return loadConfig(env);
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    console.error(error.message);
    return null;
  }
}

import { Logger } from '@nestjs/common';
import { Redis } from 'ioredis';

export const REDIS = Symbol('REDIS');

/**
 * The shared counters' connection, or null without REDIS_URL. Commands fail at once while Redis is
 * unreachable (no offline queue) so a Redis outage never stalls requests: the limiters then count
 * locally and log it.
 */
export function connectRedis(url: string | undefined, keyPrefix: string): Redis | null {
  if (!url) return null;
  const logger = new Logger('Redis');
  const client = new Redis(url, {
    keyPrefix,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 1,
    connectTimeout: 2_000,
    retryStrategy: (attempt) => Math.min(attempt * 200, 2_000),
  });
  let lastWarning = 0;
  client.on('error', (error: Error) => {
    if (Date.now() - lastWarning < 30_000) return;
    lastWarning = Date.now();
    logger.warn(`Redis unavailable, rate limits counted per instance meanwhile: ${error.message}`);
  });
  return client;
}

import { createCipheriv, createDecipheriv, createHmac, hkdfSync, randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { AppConfig } from '../config/env.schema.js';

export const SECRET_PREFIX = 'whsec_';

/** `whsec_` and the base64 of 32 random bytes (Standard Webhooks' form). */
export function generateWebhookSecret(): string {
  return `${SECRET_PREFIX}${randomBytes(32).toString('base64')}`;
}

/**
 * The key that encrypts secrets at rest: WEBHOOK_SECRET_KEY, else derived from JWT_SECRET (shared by
 * every instance already), else a random key kept under DATA_DIR (a developer's single instance).
 */
export function resolveSecretKey(config: AppConfig): Buffer {
  if (config.WEBHOOK_SECRET_KEY) return Buffer.from(config.WEBHOOK_SECRET_KEY, 'base64');
  if (config.JWT_SECRET) return Buffer.from(hkdfSync('sha256', config.JWT_SECRET, 'kqs', 'webhook-secrets', 32));
  const file = join(config.DATA_DIR, 'webhook-secret-key');
  try {
    return Buffer.from(readFileSync(file, 'utf8').trim(), 'base64');
  } catch {
    mkdirSync(config.DATA_DIR, { recursive: true });
    const key = randomBytes(32);
    writeFileSync(file, key.toString('base64'), { mode: 0o600 });
    return key;
  }
}

/** AES-256-GCM: `v1.` + base64(iv | tag | ciphertext). A secret must sign, so it cannot be only a hash. */
export class SecretBox {
  constructor(private readonly key: Buffer) {}

  seal(secret: string): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv);
    const encrypted = Buffer.concat([cipher.update(secret, 'utf8'), cipher.final()]);
    return `v1.${Buffer.concat([iv, cipher.getAuthTag(), encrypted]).toString('base64')}`;
  }

  open(sealed: string): string {
    const raw = Buffer.from(sealed.slice(3), 'base64');
    const decipher = createDecipheriv('aes-256-gcm', this.key, raw.subarray(0, 12));
    decipher.setAuthTag(raw.subarray(12, 28));
    return Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]).toString('utf8');
  }
}

/**
 * Standard Webhooks' signature: base64 HMAC-SHA256 of `id.timestamp.body`, keyed with the secret's
 * base64-decoded bytes; one `v1,<signature>` per secret, space-separated (during a rotation, two).
 */
export function signatureHeader(secrets: readonly string[], id: string, timestamp: number, body: string): string {
  return secrets
    .map((secret) => {
      const key = Buffer.from(secret.slice(SECRET_PREFIX.length), 'base64');
      return `v1,${createHmac('sha256', key).update(`${id}.${timestamp}.${body}`).digest('base64')}`;
    })
    .join(' ');
}

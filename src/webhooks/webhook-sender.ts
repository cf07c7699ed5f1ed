import http from 'node:http';
import https from 'node:https';
import { isIP, type LookupFunction } from 'node:net';
import { guardedLookup, isRefusedAddress, plainLookup, RefusedAddressError, type Resolver } from './webhook-url.js';

/** What is kept of a receiver's answer. */
export const RESPONSE_BODY_MAX = 1024;

export interface SendResult {
  /** The receiver's status, or null when there was no answer (refused, unreachable, timed out). */
  status: number | null;
  body: string;
  /** Why it failed, when it did. */
  error: string | null;
}

export interface SenderOptions {
  timeoutMs: number;
  allowPrivate: boolean;
  /** Tests only: a resolver instead of the system's. */
  resolve?: Resolver;
}

/**
 * POSTs one delivery. Redirects are not followed (node's client never does; a 3xx is a failure); the
 * whole attempt, connection to last byte kept, has `timeoutMs`; only the first 1 KB of the answer is
 * read. Unless private URLs are allowed, the address connected to is the one the guarded lookup checked.
 */
export class WebhookSender {
  private readonly lookup: LookupFunction;
  private readonly agents: { http: http.Agent; https: https.Agent };

  constructor(private readonly options: SenderOptions) {
    this.lookup = options.allowPrivate ? plainLookup : guardedLookup(options.resolve);
    this.agents = {
      http: new http.Agent({ keepAlive: true, maxSockets: 64 }),
      https: new https.Agent({ keepAlive: true, maxSockets: 64 }),
    };
  }

  send(url: string, headers: Record<string, string>, body: string): Promise<SendResult> {
    const target = new URL(url);
    const host = target.hostname.replace(/^\[|\]$/g, '');
    // A literal address never goes through `lookup`: checked here.
    if (!this.options.allowPrivate && isIP(host) && isRefusedAddress(host)) {
      return Promise.resolve({ status: null, body: '', error: new RefusedAddressError(host).message });
    }
    const secure = target.protocol === 'https:';
    if (!secure && !this.options.allowPrivate) {
      return Promise.resolve({ status: null, body: '', error: 'Only https URLs are allowed.' });
    }
    const client = secure ? https : http;
    return new Promise((resolve) => {
      let settled = false;
      const finish = (result: SendResult) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        resolve(result);
      };
      const request = client.request(
        target,
        {
          method: 'POST',
          agent: secure ? this.agents.https : this.agents.http,
          lookup: this.lookup,
          headers: {
            'content-type': 'application/json',
            'content-length': String(Buffer.byteLength(body)),
            'user-agent': 'KnowledgeQueryService-Webhooks/1',
            ...headers,
          },
        },
        (response) => {
          const chunks: Buffer[] = [];
          let kept = 0;
          const done = () => {
            const status = response.statusCode ?? 0;
            const text = Buffer.concat(chunks)
              .subarray(0, RESPONSE_BODY_MAX)
              .toString('utf8')
              .replace(/\uFFFD+$/, '')
              // PostgreSQL text cannot hold a NUL: unrecorded, the delivery would be sent again at every lease.
              .replace(/\u0000/g, '\uFFFD');
            const ok = status >= 200 && status < 300;
            finish({ status, body: text, error: ok ? null : `The receiver answered ${status}.` });
          };
          response.on('data', (chunk: Buffer) => {
            if (kept < RESPONSE_BODY_MAX) chunks.push(chunk);
            kept += chunk.length;
            // Enough is kept: the rest is not read (and the connection not reused).
            if (kept >= RESPONSE_BODY_MAX) {
              done();
              response.destroy();
            }
          });
          response.on('end', done);
          response.on('error', done);
        },
      );
      const timer = setTimeout(() => {
        request.destroy();
        finish({ status: null, body: '', error: `No answer within ${this.options.timeoutMs} ms.` });
      }, this.options.timeoutMs);
      request.on('error', (error) => {
        finish({ status: null, body: '', error: error.message.slice(0, 300) });
      });
      request.end(body);
    });
  }

  close(): void {
    this.agents.http.destroy();
    this.agents.https.destroy();
  }
}

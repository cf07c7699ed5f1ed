import type { HttpReply } from './request.js';

export interface EventStream {
  /** One Server-Sent Event: `data` as JSON (a string is written as is), under `event` when given. */
  send(data: unknown, event?: string): void;
  end(): void;
}

/**
 * Answers with `text/event-stream`, written to the socket directly; the headers set so far (request
 * id, rate limits, credits, CORS, helmet's) go with it. From here on a failure can only travel as an event.
 */
export function openEventStream(reply: HttpReply): EventStream {
  reply.hijack();
  const response = reply.raw;
  response.writeHead(200, {
    ...(reply.getHeaders() as Record<string, string>),
    'content-type': 'text/event-stream',
    'cache-control': 'no-cache',
    'x-accel-buffering': 'no',
  });
  return {
    send(data, event) {
      const payload = typeof data === 'string' ? data : JSON.stringify(data);
      response.write(`${event ? `event: ${event}\n` : ''}data: ${payload}\n\n`);
    },
    end: () => response.end(),
  };
}

/** Aborts when the connection closes before the response has been written in full. */
export function abortedWhenClientGoes(reply: HttpReply): AbortSignal {
  const clientGone = new AbortController();
  reply.raw.once('close', () => {
    if (!reply.raw.writableFinished) clientGone.abort();
  });
  return clientGone.signal;
}

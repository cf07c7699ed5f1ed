import { Logger } from '@nestjs/common';
import { UpstreamFailureError } from '../../common/errors.js';
import type { AnswerInput, Answerer } from './answerer.js';
import { NOTHING_FOUND } from './answerer.js';
import { readableBlocks } from './readable-passage.js';

export interface LlmSettings {
  baseUrl: string;
  apiKey?: string;
  model: string;
  timeoutMs: number;
}

const SYSTEM_PROMPT =
  'You answer questions using only the numbered passages provided. Cite passages as [n]. ' +
  'If the passages do not contain the answer, say that the knowledge base does not cover it.';

/**
 * Asks an OpenAI-compatible chat-completions endpoint, grounded on the retrieved passages. Any upstream
 * failure or timeout becomes an UpstreamFailureError: a generic 500 for the client, details in the log.
 */
export class LlmAnswerer implements Answerer {
  private readonly logger = new Logger(LlmAnswerer.name);

  constructor(private readonly settings: LlmSettings) {}

  async *answer({ question, passages, history = [], signal }: AnswerInput): AsyncIterable<string> {
    if (passages.length === 0) {
      yield NOTHING_FOUND;
      return;
    }
    // The same prose the extractive answerer quotes: no Markdown markers, no rows of navigation links.
    const context = passages
      .map((passage, index) => `[${index + 1}] ${passage.title}\n${readableBlocks(passage.content).join('\n')}`)
      .join('\n\n');
    const messages = [
      { role: 'system', content: SYSTEM_PROMPT },
      ...history.slice(-6),
      { role: 'user', content: `Passages:\n${context}\n\nQuestion: ${question}` },
    ];
    yield await this.complete(messages, signal);
  }

  private async complete(messages: { role: string; content: string }[], clientGone?: AbortSignal): Promise<string> {
    const url = `${this.settings.baseUrl.replace(/\/+$/, '')}/chat/completions`;
    let response: Response;
    try {
      response = await fetch(url, {
        method: 'POST',
        headers: {
          'Content-Type': 'application/json',
          ...(this.settings.apiKey ? { Authorization: `Bearer ${this.settings.apiKey}` } : {}),
        },
        body: JSON.stringify({ model: this.settings.model, messages, temperature: 0.2 }),
        // The model's work is cut short when the client has gone: nobody would read the answer.
        signal: clientGone
          ? AbortSignal.any([AbortSignal.timeout(this.settings.timeoutMs), clientGone])
          : AbortSignal.timeout(this.settings.timeoutMs),
      });
    } catch (error) {
      this.logger.warn(`model request failed: ${(error as Error).name}`);
      throw new UpstreamFailureError('model request failed or timed out');
    }
    if (!response.ok) {
      this.logger.warn(`model answered HTTP ${response.status}`);
      await response.body?.cancel().catch(() => undefined);
      throw new UpstreamFailureError(`model answered HTTP ${response.status}`);
    }
    let body: { choices?: { message?: { content?: unknown } }[] };
    try {
      body = (await response.json()) as typeof body;
    } catch {
      throw new UpstreamFailureError('model answered with a body that is not JSON');
    }
    const content = body.choices?.[0]?.message?.content;
    if (typeof content !== 'string' || content.trim() === '')
      throw new UpstreamFailureError('model answered without content');
    return content.trim();
  }
}

import { Controller, Post, Req, Res } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import { Authenticated, CurrentPrincipal } from '../common/auth.decorators.js';
import { abortedWhenClientGoes } from '../common/event-stream.js';
import type { Principal } from '../common/principal.js';
import type { HttpReply, HttpRequest } from '../common/request.js';
import { doNotStoreAnswer } from '../idempotency/answer-not-stored.js';
import { KnowledgeTools } from './knowledge-tools.js';

const BATCH_REFUSED = {
  code: -32600,
  message: 'Invalid Request: JSON-RPC batches are not supported; send one message per POST.',
};

/** The request as the SDK's web-standard transport reads it: method and headers (the body is parsed already). */
function webRequestOf(request: HttpRequest): Request {
  const headers = new Headers();
  for (const [name, value] of Object.entries(request.headers)) {
    if (typeof value === 'string') headers.set(name, value);
    else if (Array.isArray(value)) for (const one of value) headers.append(name, one);
  }
  return new Request(`http://localhost${request.url}`, { method: request.method, headers });
}

/**
 * The Model Context Protocol's Streamable HTTP transport (docs/API.md, "MCP"), stateless: every POST is
 * answered on its own, by a server built for its caller, in JSON. So it passes through the whole request
 * pipeline like any REST route (401, rate limits, request id, CORS, Idempotency-Key), and any instance
 * can answer any request. Without sessions there is no stream to open with GET nor session to end with
 * DELETE: both are 405, as the transport's specification allows. The SDK's web-standard transport is
 * used rather than its Node wrapper so that the answer goes out through Fastify's reply (its headers and
 * onSend hooks) instead of a hijacked socket.
 */
@ApiExcludeController()
@Authenticated({ role: 'viewer' })
@Controller('mcp')
export class McpController {
  constructor(private readonly tools: KnowledgeTools) {}

  @Post()
  async post(
    @CurrentPrincipal() caller: Principal,
    @Req() request: HttpRequest,
    @Res() reply: HttpReply,
  ): Promise<void> {
    // A JSON-RPC batch (MCP dropped them in 2025-06-18; the SDK takes up to 100) would be many calls in
    // one request, each past the per-request rate limit: one message per POST.
    if (Array.isArray(request.body)) {
      await reply.status(400).send({ jsonrpc: '2.0', id: null, error: BATCH_REFUSED });
      return;
    }
    const server = this.tools.serverFor({
      caller,
      onSpend: (headers) => void reply.headers(headers),
      onTransientFailure: () => doNotStoreAnswer(request),
      signal: abortedWhenClientGoes(reply),
    });
    const transport = new WebStandardStreamableHTTPServerTransport({ enableJsonResponse: true });
    try {
      await server.connect(transport);
      const response = await transport.handleRequest(webRequestOf(request), { parsedBody: request.body });
      response.headers.forEach((value, name) => void reply.header(name, value));
      const body = await response.text();
      await reply.status(response.status).send(body === '' ? undefined : body);
    } finally {
      await server.close();
    }
  }
}

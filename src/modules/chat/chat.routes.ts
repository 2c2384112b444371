import { Router, type Response } from 'express';
import { GatewayError, MASKED_INTERNAL, errorBody } from '../../errors';
import { restPath } from '../../http/case';
import { headersOf } from '../../http/provider-headers';
import { callerOf, lazyTenantRequest } from '../../http/rest';
import type { Logger } from '../../logger';
import type { ChatAnswer } from '../../providers/types';
import type { Services } from '../../services';
import { ChunkEvents, toCompletionJson } from './chat.mapper';

type Streamed = Extract<ChatAnswer, { stream: true }>;

/** `/v1/chat/completions`: OpenAI's request and answer; `stream: true` as server-sent events. */
export function chatRoutes(services: Services, logger: Logger): Router {
  const router = Router();

  router.post('/completions', async (req, res) => {
    // The caller going away (before the answer is complete) ends the provider call.
    const cancel = new AbortController();
    res.on('close', () => {
      if (!res.writableFinished) cancel.abort();
    });
    // OpenAI's request goes to the service as it came (snake_case): it is relayed, not converted.
    const { scope, body } = await lazyTenantRequest(services.workspaces, req, res, [], 'as-sent');
    const meter = services.usage.recorder.chatMeter(callerOf(res));
    const { answer, includeUsage, choices } = await services.chat.complete(scope, headersOf(req), body, cancel.signal, meter);
    if (!answer.stream) {
      res.status(200).json(toCompletionJson(answer.completion));
      return;
    }
    await streamAnswer(res, answer, includeUsage, choices, logger);
  });

  return router;
}

const EVENT_STREAM_HEAD = { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache', 'x-accel-buffering': 'no' };

/**
 * Writes the answer's events as the provider produces them (a relayed stream's as they came, a
 * translated one's chunk by chunk), then `data: [DONE]`. Once the head is sent a failure can no longer
 * be a status: it ends the stream with an error event in the error shape (OpenAI's SDKs raise it). A
 * client that left stops the loop, which closes the provider's stream.
 */
async function streamAnswer(res: Response, answer: Streamed, includeUsage: boolean, choices: number, logger: Logger): Promise<void> {
  res.writeHead(200, EVENT_STREAM_HEAD);
  const events = new ChunkEvents(answer);
  try {
    if (!answer.relayed) await send(res, events.role(choices), true);
    for await (const chunk of answer.chunks) {
      if (res.destroyed) return;
      // A relayed read is one write already; a translated read's chunks are gathered into one (`corked`).
      const text = chunk.type === 'events' ? chunk.text : events.of(chunk, includeUsage);
      if (text) await send(res, text, chunk.type !== 'events');
    }
    res.end('data: [DONE]\n\n');
  } catch (err) {
    if (res.destroyed) return;
    if (!(err instanceof GatewayError)) logger.error({ err }, 'chat stream failed');
    res.end(`data: ${JSON.stringify(errorBody(err instanceof GatewayError ? err : MASKED_INTERNAL, restPath))}\n\n`);
  }
}

/**
 * One or more events; waits while the client's socket is full (or until it closes) so a slow reader
 * holds the provider back. With `corked`, the events of one provider read (often several) leave in one
 * write: the socket is corked until the event loop has run the promise jobs that turn them into
 * events, which delays none of them past that loop turn.
 */
function send(res: Response, text: string, corked: boolean): Promise<void> | void {
  if (corked && !res.writableCorked) {
    res.cork();
    setImmediate(() => res.uncork());
  }
  if (res.write(text)) return;
  return new Promise((resolve) => {
    const done = () => {
      res.off('drain', done);
      res.off('close', done);
      resolve();
    };
    res.on('drain', done);
    res.on('close', done);
  });
}

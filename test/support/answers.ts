/**
 * `gatewayFetch`: `fetch` for requests to a gateway under test, checking every `/v1` answer against
 * openapi.yaml and, where it is one of OpenAI's objects, against OpenAI's document
 * (test/support/openapi.ts). `api()` goes through it, so does the OpenAI SDK of the tests
 * (`gatewaySdk`), and tests that need the raw response call it instead of `fetch`.
 *
 * A JSON answer is read, checked and handed back as a new response with the same status, headers and
 * text. A server-sent event stream is checked event by event as the caller reads it, without holding
 * it back: a test that stops reading (a client going away) still cancels the gateway's stream. Other
 * answers (file content) are checked for a documented status and media type and pass on unread.
 */
import OpenAI from 'openai';
import { assertDocumentedAnswer, assertDocumentedEvent, assertDocumentedRequest } from './openapi';

const NULL_BODY_STATUSES = new Set([101, 204, 205, 304]);

const requestOf = (input: string | URL | Request, init?: RequestInit) => ({
  url: new URL(input instanceof Request ? input.url : input),
  method: init?.method ?? (input instanceof Request ? input.method : 'GET'),
});

export async function gatewayFetch(input: string | URL | Request, init?: RequestInit): Promise<Response> {
  const { url, method } = requestOf(input, init);
  if (!url.pathname.startsWith('/v1/') && url.pathname !== '/v1') return fetch(input, init);
  const sent = await sentBody(init);
  const res = await fetch(input, init);
  if (sent && res.status < 300) assertDocumentedRequest(method, url.pathname, sent.mediaType, sent.body);
  return checkedAnswer(method, url.pathname + url.search, res);
}

/**
 * What a request sends, for `assertDocumentedRequest`: a JSON body parsed, a multipart form as its
 * fields (a file part as its filename). Null for a body that cannot be read twice (a stream) or is
 * no JSON (a test of garbage input): those are not checked.
 */
async function sentBody(init: RequestInit | undefined): Promise<{ mediaType: string; body: unknown } | null> {
  const body = init?.body;
  if (body === undefined || body === null) return { mediaType: '', body: undefined };
  const contentType = new Headers(init?.headers).get('content-type') ?? '';
  const mediaType = contentType.split(';')[0].trim().toLowerCase();
  if (body instanceof FormData) return { mediaType: 'multipart/form-data', body: fieldsOf(body) };
  if (mediaType === 'multipart/form-data' && (typeof body === 'string' || body instanceof Uint8Array)) {
    const form = await new Response(body, { headers: { 'content-type': contentType } }).formData().catch(() => null);
    return form && { mediaType, body: fieldsOf(form) };
  }
  if (mediaType !== 'application/json' || typeof body !== 'string') return null;
  try {
    return { mediaType, body: JSON.parse(body) };
  } catch {
    return null;
  }
}

function fieldsOf(form: FormData): Record<string, string> {
  const fields: Record<string, string> = {};
  form.forEach((value, name) => {
    fields[name] = typeof value === 'string' ? value : value.name;
  });
  return fields;
}

async function checkedAnswer(method: string, path: string, res: Response): Promise<Response> {
  const contentType = res.headers.get('content-type');
  const mediaType = (contentType ?? '').split(';')[0].trim().toLowerCase();
  if (mediaType === 'text/event-stream' && res.body) {
    assertDocumentedAnswer(method, path, res.status, contentType, undefined);
    return sameAs(res, res.body.pipeThrough(eventChecker(method, path)));
  }
  if (mediaType !== 'application/json' && mediaType !== '') {
    assertDocumentedAnswer(method, path, res.status, contentType, undefined);
    return res;
  }
  const text = await res.text();
  let parsed: unknown = text;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {
    // Checked as text: the document's schema refuses it.
  }
  assertDocumentedAnswer(method, path, res.status, contentType, parsed);
  return sameAs(res, NULL_BODY_STATUSES.has(res.status) ? null : text);
}

/** A response like `res` (status, headers, URL) with another body. */
function sameAs(res: Response, body: BodyInit | null): Response {
  const copy = new Response(body, { status: res.status, statusText: res.statusText, headers: res.headers });
  Object.defineProperty(copy, 'url', { value: res.url });
  return copy;
}

/** Passes the stream's bytes on unchanged, checking each complete event's `data:` payload as it goes by. */
function eventChecker(method: string, path: string): TransformStream<Uint8Array, Uint8Array> {
  const decoder = new TextDecoder();
  let pending = '';
  const checkEvents = (final: boolean) => {
    const events = pending.replaceAll('\r\n', '\n').split('\n\n');
    pending = final ? '' : (events.pop() ?? '');
    for (const event of events) {
      const data = event
        .split('\n')
        .filter((line) => line.startsWith('data:'))
        .map((line) => line.slice('data:'.length).replace(/^ /, ''));
      if (data.length > 0) assertDocumentedEvent(method, path, data.join('\n'));
    }
  };
  return new TransformStream({
    transform(chunk, controller) {
      pending += decoder.decode(chunk, { stream: true });
      checkEvents(false);
      controller.enqueue(chunk);
    },
    flush() {
      pending += decoder.decode();
      checkEvents(true);
    },
  });
}

/**
 * The official OpenAI SDK, unchanged, pointed at a gateway, its answers checked by `gatewayFetch`.
 * `apiKey` is what the SDK sends as `Authorization: Bearer` (a provider's key in client mode);
 * `onAnswer` sees each answer's text (for assertions on what the gateway sent).
 */
export function gatewaySdk(
  gw: { url: string; key: string },
  options: { apiKey?: string; headers?: Record<string, string>; onAnswer?: (text: string) => void } = {},
): OpenAI {
  const { onAnswer } = options;
  return new OpenAI({
    apiKey: options.apiKey ?? 'unused',
    baseURL: `${gw.url}/v1`,
    defaultHeaders: { 'x-gateway-api-key': gw.key, ...options.headers },
    maxRetries: 0,
    fetch: onAnswer
      ? async (url, init) => {
          const res = await gatewayFetch(url, init);
          onAnswer(await res.clone().text());
          return res;
        }
      : gatewayFetch,
  });
}

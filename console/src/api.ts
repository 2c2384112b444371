/**
 * Every call of the console goes through the gateway's public faces (/v1 and /graphql) with the API key
 * the user pasted. The key lives in session storage only: never in the URL, never logged, gone when
 * the tab closes. An organisation key may choose one of its workspaces: every call then names it
 * (`workspace_id` on REST, the `workspaceId` variable on GraphQL).
 */
import type { ToolCallDelta } from './chat-request';

const KEY_STORAGE = 'gateway-console.api-key';
const WORKSPACE_STORAGE = 'gateway-console.workspace';
const KEY_HEADER = 'x-gateway-api-key';

export const storedKey = (): string | null => sessionStorage.getItem(KEY_STORAGE);
export const storeKey = (key: string) => sessionStorage.setItem(KEY_STORAGE, key);
export function forgetKey(): void {
  sessionStorage.removeItem(KEY_STORAGE);
  sessionStorage.removeItem(WORKSPACE_STORAGE);
}

/** The workspace the calls name (a UUID), or null for the key's own (an organisation key's `default`). */
export const chosenWorkspace = (): string | null => sessionStorage.getItem(WORKSPACE_STORAGE);
export const chooseWorkspace = (id: string) => sessionStorage.setItem(WORKSPACE_STORAGE, id);

/** A /v1 path naming the chosen workspace. */
function v1(path: string): string {
  const workspace = chosenWorkspace();
  if (workspace === null) return `/v1${path}`;
  return `/v1${path}${path.includes('?') ? '&' : '?'}workspace_id=${encodeURIComponent(workspace)}`;
}

/** The gateway's error shape (`{error: {message, type, param, code}}`), or a transport failure. */
export class ApiError extends Error {
  constructor(
    message: string,
    readonly status: number,
    readonly code: string | null = null,
  ) {
    super(message);
  }
}

/** Listeners told when the key stops working (revoked, wrong): the app returns to sign-in. */
const unauthorisedListeners = new Set<() => void>();
export function onUnauthorised(listener: () => void): () => void {
  unauthorisedListeners.add(listener);
  return () => unauthorisedListeners.delete(listener);
}

function keyHeaders(extra: Record<string, string> = {}): Record<string, string> {
  const key = storedKey();
  return key ? { ...extra, [KEY_HEADER]: key } : extra;
}

interface ErrorBody {
  error?: { message?: string; code?: string | null };
}

function errorOf(status: number, body: unknown): ApiError {
  const error = (body as ErrorBody | null)?.error;
  if (status === 401) unauthorisedListeners.forEach((listener) => listener());
  return new ApiError(error?.message ?? `The gateway answered ${status}`, status, error?.code ?? null);
}

async function parse(res: Response): Promise<unknown> {
  const text = await res.text();
  if (!text) return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/** A JSON call to the REST face, in the chosen workspace. */
export function rest<T>(method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<T> {
  return call<T>(method, v1(path), body, headers);
}

/**
 * A GET of the reads scoped by the key itself (the usage API, the request log): they take no
 * `workspace_id` (an organisation key reads its whole organisation, narrowed by filters such as
 * `project_ids`), so the chosen workspace is not added.
 */
export function readKeyScope<T>(path: string): Promise<T> {
  return call<T>('GET', `/v1${path}`);
}

export interface Workspace {
  id: string;
  slug: string;
  name: string;
}

/** The organisation's workspaces for an organisation key; null for a workspace key (403: it has its own only). */
export async function listWorkspaces(): Promise<Workspace[] | null> {
  try {
    return (await call<{ data: Workspace[] }>('GET', '/v1/admin/workspaces')).data;
  } catch (err) {
    if (err instanceof ApiError && err.status === 403) return null;
    throw err;
  }
}

async function call<T>(method: string, url: string, body?: unknown, headers: Record<string, string> = {}): Promise<T> {
  const res = await fetch(url, {
    method,
    headers: keyHeaders(body === undefined ? headers : { ...headers, 'content-type': 'application/json' }),
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const parsed = await parse(res);
  if (!res.ok) throw errorOf(res.status, parsed);
  return parsed as T;
}

interface GraphQLAnswer<T> {
  data?: T;
  errors?: { message: string; extensions?: { code?: string } }[];
}

/**
 * An operation on the GraphQL face; its first error becomes an ApiError. The chosen workspace travels
 * as the `workspaceId` variable, which the console's operations declare and pass on.
 */
export async function graphql<T>(query: string, variables: Record<string, unknown> = {}): Promise<T> {
  const workspace = chosenWorkspace();
  const res = await fetch('/graphql', {
    method: 'POST',
    headers: keyHeaders({ 'content-type': 'application/json' }),
    body: JSON.stringify({ query, variables: workspace === null ? variables : { ...variables, workspaceId: workspace } }),
  });
  const answer = (await parse(res)) as GraphQLAnswer<T> | undefined;
  const first = answer?.errors?.[0];
  if (first) {
    const code = first.extensions?.code ?? null;
    if (code === 'UNAUTHENTICATED') unauthorisedListeners.forEach((listener) => listener());
    throw new ApiError(first.message, res.status, code);
  }
  if (!res.ok || !answer?.data) throw errorOf(res.status, answer);
  return answer.data;
}

/**
 * A multipart upload to POST /v1/files through XMLHttpRequest, the one browser API that reports upload
 * progress (fetch does not).
 */
export function uploadFile<T>(file: File, purpose: string, onProgress: (fraction: number) => void): Promise<T> {
  return new Promise((resolve, reject) => {
    const xhr = new XMLHttpRequest();
    xhr.open('POST', v1('/files'));
    for (const [name, value] of Object.entries(keyHeaders())) xhr.setRequestHeader(name, value);
    xhr.upload.onprogress = (event) => {
      if (event.lengthComputable) onProgress(event.loaded / event.total);
    };
    xhr.onerror = () => reject(new ApiError('The upload failed: the gateway could not be reached', 0));
    xhr.onload = () => {
      let body: unknown;
      try {
        body = JSON.parse(xhr.responseText);
      } catch {
        body = undefined;
      }
      if (xhr.status >= 200 && xhr.status < 300) resolve(body as T);
      else reject(errorOf(xhr.status, body));
    };
    const form = new FormData();
    form.append('purpose', purpose);
    form.append('file', file);
    xhr.send(form);
  });
}

/**
 * Saves a stored file's content (`GET /v1/files/{id}/content`) under `filename`. The call needs the
 * key header, which a plain link cannot send: the bytes are fetched, then handed to the browser as a
 * download from memory.
 */
export async function downloadFile(fileId: string, filename: string): Promise<void> {
  const res = await fetch(v1(`/files/${encodeURIComponent(fileId)}/content`), { headers: keyHeaders() });
  if (!res.ok) throw errorOf(res.status, await parse(res));
  const url = URL.createObjectURL(await res.blob());
  try {
    const link = document.createElement('a');
    link.href = url;
    link.download = filename;
    link.click();
  } finally {
    // After the click the browser holds the download; the page's copy can go.
    setTimeout(() => URL.revokeObjectURL(url), 1000);
  }
}

/** What one streamed chunk adds to the answer: text, pieces of tool calls, or both. */
export interface ChatDelta {
  content?: string | null;
  tool_calls?: ToolCallDelta[];
}

interface ChatChunk {
  choices?: { delta?: ChatDelta }[];
}

/**
 * POST /v1/chat/completions with `stream: true`: reads the server-sent events (`data: {chunk}` …
 * `data: [DONE]`) and hands each piece of the answer (text, tool-call pieces) to `onDelta` as it arrives.
 */
export async function streamChat(
  body: Record<string, unknown>,
  headers: Record<string, string>,
  onDelta: (delta: ChatDelta) => void,
  signal: AbortSignal,
): Promise<void> {
  const res = await fetch(v1('/chat/completions'), {
    method: 'POST',
    headers: keyHeaders({ ...headers, 'content-type': 'application/json', accept: 'text/event-stream' }),
    body: JSON.stringify({ ...body, stream: true }),
    signal,
  });
  if (!res.ok || !res.body) throw errorOf(res.status, await parse(res));
  const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    buffer += value;
    const events = buffer.split(/\r?\n\r?\n/);
    buffer = events.pop() ?? '';
    for (const event of events) {
      const data = event
        .split(/\r?\n/)
        .filter((line) => line.startsWith('data:'))
        .map((line) => line.slice(5).trim())
        .join('\n');
      if (data === '[DONE]') return;
      if (!data) continue;
      const chunk = JSON.parse(data) as ChatChunk & ErrorBody;
      if (chunk.error) throw new ApiError(chunk.error.message ?? 'The provider failed', 502, chunk.error.code ?? null);
      const delta = chunk.choices?.[0]?.delta;
      if (delta?.content || delta?.tool_calls?.length) onDelta(delta);
    }
  }
}

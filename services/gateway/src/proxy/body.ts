import { AppError, inspectJson, isJsonMediaType } from '@crm/http';

export const MAX_JSON_BYTES = 1024 * 1024;
/** Uploads: 20 MB of file (contract §15) plus room for the multipart framing and small fields. */
export const MAX_UPLOAD_FILE_BYTES = 20 * 1024 * 1024;
export const MAX_MULTIPART_BYTES = MAX_UPLOAD_FILE_BYTES + 64 * 1024;

function tooLargeJson(): AppError {
  return new AppError('payload_too_large', `JSON body must be at most ${MAX_JSON_BYTES} bytes`);
}

function tooLargeUpload(): AppError {
  return new AppError('payload_too_large', `Uploads must be at most ${MAX_UPLOAD_FILE_BYTES} bytes (20 MB)`);
}

/** Passes a stream through, erroring it as soon as more than `limit` bytes have gone by (bounded memory). */
function capStream(stream: ReadableStream<Uint8Array>, limit: number) {
  let seen = 0;
  const capped = stream.pipeThrough(
    new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, controller) {
        seen += chunk.byteLength;
        if (seen > limit) controller.error(tooLargeUpload());
        else controller.enqueue(chunk);
      },
    }),
  );
  return { stream: capped, exceeded: () => seen > limit };
}

export type RequestBody =
  | { kind: 'none' }
  | { kind: 'json'; text: string; value: unknown }
  | { kind: 'multipart'; stream: ReadableStream<Uint8Array>; contentType: string; exceeded: () => boolean };

/** Reads at most MAX_JSON_BYTES of a stream, failing with 413 past it. */
async function readLimited(stream: ReadableStream<Uint8Array>): Promise<Uint8Array> {
  const reader = stream.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > MAX_JSON_BYTES) {
      await reader.cancel();
      throw tooLargeJson();
    }
    chunks.push(value);
  }
  const out = new Uint8Array(size);
  let offset = 0;
  for (const chunk of chunks) {
    out.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return out;
}

/** The two upload routes (contract §15): the only requests whose body is multipart/form-data. */
const UPLOAD_ROUTE = /^\/v1\/(?:contacts|opportunities)\/[^/]+\/documents$/;

/** Whether a request is an upload (`POST /v1/contacts/{identifier}/documents`, `POST /v1/opportunities/{id}/documents`). */
export function isUploadRoute(method: string, url: string): boolean {
  const pathStart = url.indexOf('/', url.indexOf('//') + 2);
  const queryStart = url.indexOf('?', pathStart);
  return (
    method === 'POST' && pathStart !== -1 && UPLOAD_ROUTE.test(queryStart === -1 ? url.slice(pathStart) : url.slice(pathStart, queryStart))
  );
}

const mediaTypeOf = (contentType: string) => contentType.split(';', 1)[0]?.trim().toLowerCase() ?? '';

/** Whether a stream carries at least one byte (read only that far). */
async function hasBytes(stream: ReadableStream<Uint8Array>): Promise<boolean> {
  const reader = stream.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return false;
    if (value.byteLength > 0) {
      await reader.cancel();
      return true;
    }
  }
}

/** A Content-Length value (digits only; at most 15 of them, a size a Number holds exactly). */
const DECIMAL = /^\d{1,15}$/;

const utf8 = new TextDecoder('utf-8', { fatal: true });

/** The JSON text and value of a body, or a 400 for bytes that are not UTF-8, malformed JSON, nesting past 64 levels, unpaired surrogates. */
function parseJson(bytes: Uint8Array): RequestBody {
  let text: string;
  try {
    text = utf8.decode(bytes);
  } catch {
    throw new AppError('bad_request', 'Malformed JSON body: not valid UTF-8');
  }
  if (text.trim() === '') return { kind: 'none' };
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new AppError('bad_request', 'Malformed JSON body');
  }
  // Malformed input is refused here (and the fingerprint's recursion stays shallow); NUL and
  // non-finite numbers are field errors the owning service names in its 422.
  inspectJson(value);
  return { kind: 'json', text, value };
}

/**
 * Classifies a request body (contract §19): on the two upload routes it must be
 * multipart/form-data and is left as a stream (20 MB cap while streaming); everywhere else it
 * must be JSON, read (≤ 1 MB) and parsed once so malformed JSON is a 400 here and idempotency
 * can fingerprint it. Any other Content-Type with content is a 400 — so a multipart body can
 * never skip the fingerprint of a JSON endpoint. A request without a body needs no Content-Type.
 */
export async function readRequestBody(request: Request): Promise<RequestBody> {
  const method = request.method;
  if (method === 'GET' || method === 'HEAD' || method === 'OPTIONS') return { kind: 'none' };
  const declared = request.headers.get('content-length');
  if (declared === '0') return { kind: 'none' };
  const contentType = request.headers.get('content-type') ?? '';
  const upload = isUploadRoute(method, request.url);
  // The common case, a JSON body framed by its Content-Length alone (no Transfer-Encoding): the
  // runtime reads exactly that many bytes, so the size is checked before reading and the body is
  // read whole, without a stream and its reader (a keyed write's body costs the gateway less).
  if (declared !== null && DECIMAL.test(declared) && !request.headers.has('transfer-encoding') && isJsonMediaType(contentType) && !upload) {
    if (Number(declared) > MAX_JSON_BYTES) throw tooLargeJson();
    return parseJson(new Uint8Array(await request.arrayBuffer()));
  }
  if (!request.body) return { kind: 'none' };
  if (upload) {
    if (mediaTypeOf(contentType) !== 'multipart/form-data') {
      if (contentType === '' && !(await hasBytes(request.body))) return { kind: 'none' };
      throw new AppError('bad_request', 'Content-Type must be multipart/form-data (an upload)');
    }
    // Refused before reading when the declared size is already too large; otherwise counted while streaming.
    if (declared && Number(declared) > MAX_MULTIPART_BYTES) throw tooLargeUpload();
    return { kind: 'multipart', contentType, ...capStream(request.body, MAX_MULTIPART_BYTES) };
  }
  if (!isJsonMediaType(contentType)) {
    if (contentType === '' && !(await hasBytes(request.body))) return { kind: 'none' };
    throw new AppError('bad_request', 'Content-Type must be application/json (multipart/form-data only for uploads)');
  }
  if (declared && Number(declared) > MAX_JSON_BYTES) throw tooLargeJson();
  return parseJson(await readLimited(request.body));
}

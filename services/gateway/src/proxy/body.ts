import { AppError } from '@crm/http';

export const MAX_JSON_BYTES = 1024 * 1024;
/** Uploads: 20 MB of file (contract §15) plus room for the multipart framing and small fields. */
export const MAX_UPLOAD_FILE_BYTES = 20 * 1024 * 1024;
export const MAX_MULTIPART_BYTES = MAX_UPLOAD_FILE_BYTES + 64 * 1024;

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

/** Reads at most `limit` bytes of a stream, failing with 413 past it. */
async function readLimited(stream: ReadableStream<Uint8Array>, limit: number): Promise<Uint8Array> {
  const reader = stream.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > limit) {
      await reader.cancel();
      throw new AppError('payload_too_large', `JSON body must be at most ${limit} bytes`);
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

/**
 * Classifies a request body: JSON is read (≤ 1 MB) and parsed once so malformed JSON is a
 * 400 here and idempotency can fingerprint it; multipart is left as a stream; anything else
 * with content is a 400.
 */
export async function readRequestBody(request: Request): Promise<RequestBody> {
  if (request.method === 'GET' || request.method === 'HEAD' || request.method === 'OPTIONS' || !request.body) return { kind: 'none' };
  const declared = request.headers.get('content-length');
  const contentType = request.headers.get('content-type') ?? '';
  if (declared === '0') return { kind: 'none' };
  if (/^multipart\/form-data/i.test(contentType)) {
    // Refused before reading when the declared size is already too large; otherwise counted while streaming.
    if (declared && Number(declared) > MAX_MULTIPART_BYTES) throw tooLargeUpload();
    return { kind: 'multipart', contentType, ...capStream(request.body, MAX_MULTIPART_BYTES) };
  }
  if (!/^application\/([\w.+-]*\+)?json\b/i.test(contentType)) {
    if (!contentType && request.method === 'DELETE') return { kind: 'none' };
    throw new AppError('bad_request', 'Content-Type must be application/json (or multipart/form-data for uploads)');
  }
  if (declared && Number(declared) > MAX_JSON_BYTES)
    throw new AppError('payload_too_large', `JSON body must be at most ${MAX_JSON_BYTES} bytes`);
  const bytes = await readLimited(request.body, MAX_JSON_BYTES);
  const text = new TextDecoder().decode(bytes);
  if (text.trim() === '') return { kind: 'none' };
  try {
    return { kind: 'json', text, value: JSON.parse(text) };
  } catch {
    throw new AppError('bad_request', 'Malformed JSON body');
  }
}

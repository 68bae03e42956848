import type { CallOptions } from './request.ts';
import type { Delivered } from './transport.ts';
import type { PathParams, PathsWith, paths } from './types.ts';

type Post<P extends keyof paths> = NonNullable<paths[P]['post']>;

/** Paths that take a multipart upload (`POST /v1/contacts/{identifier}/documents`, `…/opportunities/{id}/documents`). */
export type UploadPath = {
  [P in PathsWith<'post'>]: Post<P> extends { requestBody: { content: { 'multipart/form-data': unknown } } } ? P : never;
}[PathsWith<'post'>];

/** The multipart fields of an upload path besides `file` (`name`, `document_category_id`), as the document types them. */
export type UploadFields<P extends UploadPath> = Omit<Post<P>['requestBody']['content']['multipart/form-data'], 'file'>;

export type UploadOptions<P extends UploadPath> = UploadFields<P> &
  CallOptions & {
    params: PathParams<P, 'post'>;
    /** The file name sent with the part; its extension must match the content. Taken from a `File` when omitted. */
    filename?: string;
    /** The part's Content-Type when `file` is not a Blob (default application/octet-stream). */
    contentType?: string;
    idempotencyKey?: string;
  };

const NOT_FIELDS = new Set(['params', 'filename', 'contentType', 'idempotencyKey', 'headers', 'signal']);

/** The multipart body of an upload: the file part, then every other field that has a value. */
export function uploadForm(file: Blob | Uint8Array | ArrayBuffer | string, options: Record<string, unknown>): FormData {
  const blob =
    file instanceof Blob ? file : new Blob([file as BlobPart], { type: String(options.contentType ?? 'application/octet-stream') });
  const filename = (options.filename as string | undefined) ?? (file as { name?: string }).name;
  if (!filename) throw new TypeError('upload: pass `filename` (its extension must match the content) or a File');
  const form = new FormData();
  form.append('file', blob, filename);
  for (const [name, value] of Object.entries(options)) {
    if (!NOT_FIELDS.has(name) && value !== undefined && value !== null) form.append(name, String(value));
  }
  return form;
}

/** A downloaded file. Read its content once: `bytes()`, `text()` or `stream`. */
export interface DownloadedFile {
  contentType: string;
  /** From `Content-Disposition` (`filename*` preferred), or null. */
  filename: string | null;
  /** `Content-Length`, or null when not sent. */
  size: number | null;
  requestId: string | null;
  stream: ReadableStream<Uint8Array> | null;
  bytes(): Promise<Uint8Array>;
  text(): Promise<string>;
}

/** Wraps a delivered download answer. */
export function downloadOf({ response }: Delivered): DownloadedFile {
  const length = response.headers.get('content-length');
  return {
    contentType: response.headers.get('content-type') ?? 'application/octet-stream',
    filename: filenameOf(response.headers.get('content-disposition')),
    size: length === null ? null : Number(length),
    requestId: response.headers.get('x-request-id'),
    stream: response.body,
    bytes: async () => new Uint8Array(await response.arrayBuffer()),
    text: () => response.text(),
  };
}

/** The file name of a Content-Disposition header: RFC 6266 `filename*=UTF-8''…` first, then `filename="…"`. */
export function filenameOf(disposition: string | null): string | null {
  if (!disposition) return null;
  const extended = /filename\*\s*=\s*([^']*)'[^']*'([^;]+)/i.exec(disposition);
  if (extended?.[2]) {
    try {
      return decodeURIComponent(extended[2].trim());
    } catch {
      // malformed percent-encoding: fall back to the plain parameter
    }
  }
  const plain = /filename\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([^;]+))/i.exec(disposition);
  if (!plain) return null;
  return plain[1] !== undefined ? plain[1].replace(/\\(.)/g, '$1') : (plain[2]?.trim() ?? null);
}

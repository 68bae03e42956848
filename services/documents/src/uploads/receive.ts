import { Buffer } from 'node:buffer';
import { AppError, type ErrorDetail } from '@crm/http';
import type { Storage } from '../storage/s3.ts';
import {
  allowedExtensions,
  ContentInspector,
  contentMismatch,
  type Extension,
  isAllowedExtension,
  MAX_FILE_BYTES,
  MAX_NAME_LENGTH,
  mimeTypes,
  requiredZipFolder,
  splitFileName,
} from './file-types.ts';
import { MultipartReader, multipartBoundary, type PartHeaders } from './multipart.ts';
import { zipHasFolder } from './zip-entries.ts';

/** A file that passed every content check and now lies in the bucket. */
export interface StoredFile {
  key: string;
  filename: string;
  baseName: string;
  extension: Extension;
  mimeType: string;
  size: number;
}

/** What an upload request carried: the stored file (if any), the text fields and every problem found. */
export interface ReceivedUpload {
  file: StoredFile | undefined;
  fields: Map<string, string>;
  problems: ErrorDetail[];
}

const TEXT_FIELDS = ['name', 'document_category_id'];
const MAX_FIELD_BYTES = 16 * 1024;
const NUL = '\u0000';
const NUL_MESSAGE = 'must not contain the NUL character (U+0000)';
const utf8 = new TextDecoder('utf-8', { fatal: true });

function tooLarge(): AppError {
  return new AppError('payload_too_large', `The file must be at most ${MAX_FILE_BYTES} bytes (20 MB)`);
}

/** A text field's value, or the rule it breaks (too long, not UTF-8); NUL is judged with the other field rules. */
async function readTextField(reader: MultipartReader): Promise<{ value: string } | { problem: string }> {
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (let chunk = await reader.readChunk(); chunk; chunk = await reader.readChunk()) {
    size += chunk.byteLength;
    // Copied: the reader frees a chunk once it moves on (releaseChunks).
    if (size <= MAX_FIELD_BYTES) chunks.push(Uint8Array.prototype.slice.call(chunk));
  }
  if (size > MAX_FIELD_BYTES) return { problem: `must be at most ${MAX_FIELD_BYTES} bytes` };
  try {
    return { value: utf8.decode(Buffer.concat(chunks)) };
  } catch {
    return { problem: 'must be valid UTF-8' };
  }
}

/** The uploaded file's base name and extension, or what is wrong with its name (reported on `file`) before any byte is stored. */
function checkedFileName(part: PartHeaders): { base: string; extension: Extension } | { problem: string } {
  const filename = part.filename ?? '';
  const { base, extension } = splitFileName(filename);
  if (filename === '') return { problem: 'is required' };
  if (part.filenameNotUtf8) return { problem: 'name must be valid UTF-8' };
  if (filename.includes(NUL)) return { problem: `name ${NUL_MESSAGE}` };
  if (!isAllowedExtension(extension)) return { problem: `must be a file of type ${allowedExtensions.join(', ')}` };
  if (base.length + extension.length + 1 > MAX_NAME_LENGTH) return { problem: `name must be at most ${MAX_NAME_LENGTH} characters` };
  return { base, extension };
}

/**
 * The file part as a stream for the bucket: each chunk is inspected before it is passed on;
 * the stream errors (so the upload is abandoned) once the file is too large or its content is
 * known to be wrong.
 */
function inspectedStream(reader: MultipartReader, inspector: ContentInspector, onTooLarge: () => void) {
  return new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        const chunk = await reader.readChunk();
        if (chunk === null) {
          inspector.finish();
          if (inspector.problem) controller.error(new Error(inspector.problem));
          else controller.close();
          return;
        }
        inspector.add(chunk);
        if (inspector.size > MAX_FILE_BYTES) {
          onTooLarge();
          controller.error(tooLarge());
        } else if (inspector.problem) controller.error(new Error(inspector.problem));
        else controller.enqueue(chunk);
      },
    },
    { highWaterMark: 0 },
  );
}

async function storeFilePart(reader: MultipartReader, part: PartHeaders, tenantId: string, storage: Storage) {
  const name = checkedFileName(part);
  if ('problem' in name) return name;
  const { base, extension } = name;

  const inspector = new ContentInspector(extension);
  const stored = `${crypto.randomUUID()}.${extension}`;
  const key = `${tenantId}/${stored}`;
  let exceeded = false;
  try {
    await storage.upload(
      key,
      inspectedStream(reader, inspector, () => {
        exceeded = true;
      }),
      mimeTypes[extension],
    );
  } catch (error) {
    await storage.remove(key).catch(() => {});
    if (exceeded) throw tooLarge();
    if (inspector.problem) return { problem: inspector.problem };
    throw storage.failure(error);
  }
  const folder = requiredZipFolder(extension);
  if (folder && !(await zipHasFolder((start, end) => storage.readRange(key, start, end), inspector.size, folder))) {
    await storage.remove(key);
    return { problem: contentMismatch(extension) };
  }
  const file: StoredFile = { key, filename: stored, baseName: base, extension, mimeType: mimeTypes[extension], size: inspector.size };
  return { file };
}

/**
 * The multipart reader of an upload request. Uploads take `multipart/form-data` with a boundary
 * and nothing else (JSON, urlencoded, no body → 400); checked before anything is looked up.
 */
export function uploadReader(request: Request): MultipartReader {
  const boundary = multipartBoundary(request.headers.get('content-type'));
  if (!boundary || !request.body) throw new AppError('bad_request', 'Uploads must be multipart/form-data with a boundary');
  return new MultipartReader(request.body, boundary, { releaseChunks: true });
}

/** A part name as a field path: a NUL is shown escaped, as the JSON body reader does. */
const fieldOf = (name: string) => name.replaceAll(NUL, '\\u0000');

/**
 * Reads a multipart upload part by part: the `file` part is streamed into the bucket while
 * its content is checked, text fields are collected, unknown parts are reported. Nothing is
 * buffered beyond one chunk of the file, and each chunk is freed once it is in the part buffer. On an exception the stored object is removed; on
 * `problems` the caller removes it.
 */
export async function receiveUpload(reader: MultipartReader, tenantId: string, storage: Storage): Promise<ReceivedUpload> {
  const result: ReceivedUpload = { file: undefined, fields: new Map(), problems: [] };
  let sawFile = false;
  try {
    for (let part = await reader.nextPart(); part; part = await reader.nextPart()) {
      if (part.name === 'file' && part.filename !== undefined) {
        if (sawFile) {
          result.problems.push({ field: 'file', message: 'must be a single file' });
          continue;
        }
        sawFile = true;
        const outcome = await storeFilePart(reader, part, tenantId, storage);
        if ('file' in outcome) result.file = outcome.file;
        else result.problems.push({ field: 'file', message: outcome.problem });
      } else if (part.filename === undefined && TEXT_FIELDS.includes(part.name)) {
        const read = await readTextField(reader);
        if ('value' in read) result.fields.set(part.name, read.value);
        else result.problems.push({ field: part.name, message: read.problem });
      } else if (part.name === 'file') {
        sawFile = true;
        result.problems.push({ field: 'file', message: 'must be a file' });
      } else {
        result.problems.push({ field: fieldOf(part.name), message: 'is not a known field' });
      }
    }
  } catch (error) {
    await reader.cancel();
    if (result.file) await storage.remove(result.file.key).catch(() => {});
    throw error;
  }
  if (!sawFile) result.problems.unshift({ field: 'file', message: 'is required' });
  return result;
}

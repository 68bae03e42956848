import { Buffer } from 'node:buffer';
import { AppError } from '@crm/http';

/** Headers of one multipart/form-data part. */
export interface PartHeaders {
  name: string;
  /** Present (possibly empty) when the part is a file. */
  filename?: string;
  /** Set when the file name's bytes (or its `filename*` percent-encoding) are not UTF-8; `filename` then holds U+FFFD in their place. */
  filenameNotUtf8?: true;
  contentType?: string;
}

const CRLF = Buffer.from('\r\n');
const HEADER_END = Buffer.from('\r\n\r\n');
const MAX_HEADER_BYTES = 16 * 1024;

function malformed(why: string): AppError {
  return new AppError('bad_request', `Malformed multipart body: ${why}`);
}

/** The boundary of a `multipart/form-data` Content-Type, or undefined when it is not one. */
export function multipartBoundary(contentType: string | null): string | undefined {
  if (!contentType || !/^multipart\/form-data\s*(;|$)/i.test(contentType)) return undefined;
  const match = /;\s*boundary=(?:"([^"]{1,70})"|([^\s;]{1,70}))/i.exec(contentType);
  return match?.[1] ?? match?.[2];
}

const utf8 = new TextDecoder('utf-8', { fatal: true });
const lossyUtf8 = new TextDecoder('utf-8');

/** A header parameter read as latin1 (one char per byte) decoded as UTF-8; undefined when the bytes are not UTF-8. */
function utf8Parameter(latin1: string): string | undefined {
  try {
    return utf8.decode(Buffer.from(latin1, 'latin1'));
  } catch {
    return undefined;
  }
}

/** `filename*=UTF-8''percent%20encoded` (RFC 5987 / 7578); undefined when it does not decode to UTF-8. */
function decodeExtended(value: string): string | undefined {
  const extended = /^([\w-]+)'[^']*'(.*)$/.exec(value);
  if (!extended) return value;
  try {
    return decodeURIComponent(extended[2] as string);
  } catch {
    return undefined;
  }
}

/** The file name of a part and whether its bytes were UTF-8 (a browser sends raw UTF-8 or `filename*`). */
function fileNameOf(params: Map<string, string>): Pick<PartHeaders, 'filename' | 'filenameNotUtf8'> {
  const star = params.get('filename*');
  const plain = params.get('filename');
  if (star === undefined && plain === undefined) return {};
  const decoded = star !== undefined ? decodeExtended(star) : utf8Parameter(plain as string);
  if (decoded !== undefined) return { filename: decoded };
  return { filename: lossyUtf8.decode(Buffer.from(star ?? (plain as string), 'latin1')), filenameNotUtf8: true };
}

/** Parses the part's header block (Content-Disposition and Content-Type), given as latin1 text. */
function parsePartHeaders(block: string): PartHeaders {
  let disposition = '';
  let contentType: string | undefined;
  for (const line of block.split('\r\n')) {
    const colon = line.indexOf(':');
    if (colon <= 0) continue;
    const key = line.slice(0, colon).trim().toLowerCase();
    const value = line.slice(colon + 1).trim();
    if (key === 'content-disposition') disposition = value;
    else if (key === 'content-type') contentType = value;
  }
  if (!/^form-data\b/i.test(disposition)) throw malformed('part without Content-Disposition: form-data');
  const params = new Map<string, string>();
  const pattern = /;\s*([\w*-]+)\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([^;]*))/g;
  for (let m = pattern.exec(disposition); m; m = pattern.exec(disposition)) {
    const raw = m[2] !== undefined ? m[2].replace(/\\(.)/g, '$1') : (m[3] ?? '').trim();
    params.set((m[1] as string).toLowerCase(), raw);
  }
  const rawName = params.get('name');
  if (rawName === undefined) throw malformed('part without a name');
  // A name that is not UTF-8 cannot be a known field; it is reported (lossily decoded) as unknown.
  const name = utf8Parameter(rawName) ?? lossyUtf8.decode(Buffer.from(rawName, 'latin1'));
  return { name, ...fileNameOf(params), ...(contentType ? { contentType } : {}) };
}

/** Chunks smaller than this are left to the garbage collector (releasing them buys nothing). */
const RELEASE_MIN_BYTES = 16 * 1024;

/**
 * Frees a chunk's memory now instead of at the next garbage collection, by detaching its
 * ArrayBuffer (`transfer(0)`). Only a buffer the chunk spans whole (its own allocation, never a
 * slice of a shared pool) of some size; a buffer that cannot be detached is left alone.
 */
function release(bytes: Uint8Array): void {
  const buffer = bytes.buffer as ArrayBuffer & { transfer?: (length: number) => ArrayBuffer; detached?: boolean };
  if (bytes.byteOffset !== 0 || bytes.byteLength !== buffer.byteLength || bytes.byteLength < RELEASE_MIN_BYTES) return;
  if (typeof buffer.transfer !== 'function' || buffer.detached) return;
  try {
    buffer.transfer(0);
  } catch {
    // not detachable (e.g. a WebAssembly memory): the GC frees it
  }
}

export interface MultipartReaderOptions {
  /**
   * Free each body chunk as soon as the reader moves past it: a chunk returned by `readChunk()` is
   * then valid only until the next `readChunk()`/`nextPart()` call (copy what must be kept).
   * Without it, an upload leaves every chunk of its body (a 20 MiB file is 20 MiB of chunks) to
   * the garbage collector, which ten uploads at once outran by ~100 MiB.
   */
  releaseChunks?: boolean;
}

/**
 * A pull-based multipart/form-data reader over a byte stream. It holds at most one incoming
 * chunk plus a delimiter's length of look-behind, so a part of any size passes through in
 * bounded memory: `nextPart()` moves to the next part (skipping what is left of the current
 * one), `readChunk()` returns the next bytes of the current part, null at its end.
 */
export class MultipartReader {
  private readonly source: ReadableStreamDefaultReader<Uint8Array>;
  private readonly delimiter: Buffer;
  private readonly releaseChunks: boolean;
  // A virtual CRLF in front lets the first boundary match the same delimiter as the others.
  private pending: Buffer = Buffer.from(CRLF);
  // The buffer `pending` points into (a body chunk or a joined copy), released once passed.
  private held: Uint8Array | undefined;
  private state: 'between' | 'body' | 'done' = 'between';

  constructor(body: ReadableStream<Uint8Array>, boundary: string, options: MultipartReaderOptions = {}) {
    this.source = body.getReader();
    this.delimiter = Buffer.from(`\r\n--${boundary}`);
    this.releaseChunks = options.releaseChunks === true;
  }

  private async pull(): Promise<void> {
    const { done, value } = await this.source.read();
    if (done) throw malformed('unexpected end of body');
    const previous = this.held;
    if (this.pending.length === 0) {
      this.pending = Buffer.from(value.buffer, value.byteOffset, value.byteLength);
      this.held = value;
    } else {
      // The undecided tail (shorter than the delimiter) joined with the new chunk, in a buffer of our own.
      const joined = new Uint8Array(this.pending.length + value.byteLength);
      joined.set(this.pending, 0);
      joined.set(value, this.pending.length);
      this.pending = Buffer.from(joined.buffer, 0, joined.byteLength);
      this.held = joined;
      if (this.releaseChunks) release(value);
    }
    if (this.releaseChunks && previous) release(previous);
  }

  private async fill(bytes: number): Promise<void> {
    while (this.pending.length < bytes) await this.pull();
  }

  /** The next bytes of the current part's body, or null once the part has ended. */
  async readChunk(): Promise<Uint8Array | null> {
    if (this.state !== 'body') return null;
    for (;;) {
      const at = this.pending.indexOf(this.delimiter);
      if (at === 0) {
        this.state = 'between';
        return null;
      }
      const safe = at > 0 ? at : this.undecidedTailStart();
      if (safe > 0) {
        const out = this.pending.subarray(0, safe);
        this.pending = this.pending.subarray(safe);
        return out;
      }
      await this.pull();
    }
  }

  /**
   * Where the bytes that might begin a delimiter start (only a tail that is a prefix of it);
   * everything before is safe to hand out. Keeping the tail short avoids copying every chunk.
   */
  private undecidedTailStart(): number {
    const { pending, delimiter } = this;
    const from = Math.max(0, pending.length - (delimiter.length - 1));
    for (let p = pending.indexOf(13, from); p !== -1; p = pending.indexOf(13, p + 1)) {
      if (pending.subarray(p).equals(delimiter.subarray(0, pending.length - p))) return p;
    }
    return pending.length;
  }

  /** Moves to the next part and returns its headers, or null after the closing boundary. */
  async nextPart(): Promise<PartHeaders | null> {
    if (this.state === 'done') return null;
    while (this.state === 'body') await this.readChunk();
    await this.findDelimiter();
    await this.fill(this.delimiter.length + 2);
    const after = this.pending.subarray(this.delimiter.length, this.delimiter.length + 2).toString('latin1');
    if (after === '--') {
      this.state = 'done';
      await this.source.cancel().catch(() => {});
      return null;
    }
    this.pending = this.pending.subarray(this.delimiter.length);
    const headerEnd = await this.findHeaderEnd();
    // The block starts with the CRLF that ends the boundary line. Read as latin1 (byte for byte):
    // parameter values are decoded as UTF-8 one by one, so a bad byte is named, not replaced.
    const block = this.pending.subarray(0, headerEnd).toString('latin1');
    this.pending = this.pending.subarray(headerEnd + HEADER_END.length);
    this.state = 'body';
    return parsePartHeaders(block.replace(/^[ \t]*\r\n/, ''));
  }

  /** Skips the preamble until `pending` starts with the delimiter. */
  private async findDelimiter(): Promise<void> {
    for (;;) {
      const at = this.pending.indexOf(this.delimiter);
      if (at >= 0) {
        this.pending = this.pending.subarray(at);
        return;
      }
      const keep = this.delimiter.length - 1;
      if (this.pending.length > keep) this.pending = this.pending.subarray(this.pending.length - keep);
      await this.pull();
    }
  }

  private async findHeaderEnd(): Promise<number> {
    for (;;) {
      const at = this.pending.indexOf(HEADER_END);
      if (at >= 0) return at;
      if (this.pending.length > MAX_HEADER_BYTES) throw malformed('part headers too large');
      await this.pull();
    }
  }

  /** Stops reading the request body (after an error). */
  async cancel(): Promise<void> {
    this.state = 'done';
    await this.source.cancel().catch(() => {});
  }
}

import { isUtf8 } from 'node:buffer';

/** Upload limits and content rules of contract §15. */
export const MAX_FILE_BYTES = 20 * 1024 * 1024;
export const MAX_NAME_LENGTH = 255;

/** Allowed extensions and the MIME type stored for each. */
export const mimeTypes = {
  pdf: 'application/pdf',
  doc: 'application/msword',
  docx: 'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
  xls: 'application/vnd.ms-excel',
  xlsx: 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
  csv: 'text/csv',
  txt: 'text/plain',
  png: 'image/png',
  jpg: 'image/jpeg',
  jpeg: 'image/jpeg',
  gif: 'image/gif',
  webp: 'image/webp',
} as const;

export type Extension = keyof typeof mimeTypes;
export const allowedExtensions = Object.keys(mimeTypes) as Extension[];

/** Whether a lower-case extension is one of the allowed types. */
export function isAllowedExtension(extension: string): extension is Extension {
  return Object.hasOwn(mimeTypes, extension);
}

/** Splits an uploaded file name into its base name (no directory, no extension) and lower-case extension. */
export function splitFileName(filename: string): { base: string; extension: string } {
  const leaf = filename.split(/[\\/]/).pop() ?? '';
  const dot = leaf.lastIndexOf('.');
  if (dot <= 0) return { base: leaf, extension: '' };
  return { base: leaf.slice(0, dot), extension: leaf.slice(dot + 1).toLowerCase() };
}

const ascii = (text: string) => Array.from(text, (c) => c.charCodeAt(0));
const signatures: Record<string, number[]> = {
  pdf: ascii('%PDF-'),
  png: [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a],
  jpeg: [0xff, 0xd8, 0xff],
  gif: ascii('GIF8'),
  ole2: [0xd0, 0xcf, 0x11, 0xe0],
  zip: [0x50, 0x4b, 0x03, 0x04],
};

function startsWith(head: Uint8Array, signature: number[], offset = 0): boolean {
  return head.length >= offset + signature.length && signature.every((byte, i) => head[offset + i] === byte);
}

/** How many leading bytes the signature check needs. */
export const SNIFF_BYTES = 12;

/** Whether the first bytes of a file match its extension (text types are checked as a whole, ZIP entries later). */
export function signatureMatches(extension: Extension, head: Uint8Array): boolean {
  switch (extension) {
    case 'pdf':
      return startsWith(head, signatures.pdf as number[]);
    case 'png':
      return startsWith(head, signatures.png as number[]);
    case 'jpg':
    case 'jpeg':
      return startsWith(head, signatures.jpeg as number[]);
    case 'gif':
      return startsWith(head, signatures.gif as number[]) && (head[4] === 0x37 || head[4] === 0x39) && head[5] === 0x61;
    case 'webp':
      return startsWith(head, ascii('RIFF')) && startsWith(head, ascii('WEBP'), 8);
    case 'doc':
    case 'xls':
      return startsWith(head, signatures.ole2 as number[]);
    case 'docx':
    case 'xlsx':
      return startsWith(head, signatures.zip as number[]);
    case 'csv':
    case 'txt':
      return true;
  }
}

/** The ZIP entry folder an Office Open XML file of this extension must contain. */
export function requiredZipFolder(extension: Extension): string | undefined {
  if (extension === 'docx') return 'word/';
  if (extension === 'xlsx') return 'xl/';
  return undefined;
}

/** Length of the UTF-8 sequence a lead byte starts (1 for anything that is not a multi-byte lead: the validator judges it). */
function sequenceLength(lead: number): number {
  if (lead >= 0xc2 && lead <= 0xdf) return 2;
  if (lead >= 0xe0 && lead <= 0xef) return 3;
  if (lead >= 0xf0 && lead <= 0xf4) return 4;
  return 1;
}

/** Where a multi-byte sequence that the chunk's end cuts short begins (the chunk's length when none is). */
function incompleteTailStart(bytes: Uint8Array): number {
  for (let i = bytes.length - 1; i >= Math.max(0, bytes.length - 3); i--) {
    const byte = bytes[i] as number;
    if ((byte & 0xc0) === 0x80) continue;
    return sequenceLength(byte) > bytes.length - i ? i : bytes.length;
  }
  return bytes.length;
}

/**
 * Checks that a text arrives as valid UTF-8 without NUL, chunk by chunk, without decoding it
 * (a TextDecoder made a string of every chunk: 20 MiB of garbage per file). A sequence split
 * between chunks is carried over (at most 3 bytes) and checked with the next chunk's bytes.
 */
class Utf8Check {
  private carry = new Uint8Array(0);

  /** False as soon as the bytes so far are not UTF-8 or contain NUL. */
  add(chunk: Uint8Array): boolean {
    if (chunk.indexOf(0) !== -1) return false;
    let rest = chunk;
    if (this.carry.length > 0) {
      const need = Math.min(sequenceLength(this.carry[0] as number) - this.carry.length, rest.length);
      const joined = new Uint8Array(this.carry.length + need);
      joined.set(this.carry);
      joined.set(rest.subarray(0, need), this.carry.length);
      rest = rest.subarray(need);
      if (joined.length < sequenceLength(joined[0] as number)) {
        this.carry = joined;
        return true;
      }
      this.carry = new Uint8Array(0);
      if (!isUtf8(joined)) return false;
    }
    const cut = incompleteTailStart(rest);
    if (!isUtf8(rest.subarray(0, cut))) return false;
    this.carry = rest.slice(cut);
    return true;
  }

  /** At the end: false when the text stops inside a sequence. */
  finish(): boolean {
    return this.carry.length === 0;
  }
}

/**
 * Watches a file's bytes as they stream by: counts them, keeps the first bytes for the
 * signature check and, for csv/txt, checks UTF-8 validity and NUL bytes. `problem` is set as
 * soon as the content is known to be wrong, so the upload can stop early. It keeps no chunk.
 */
export class ContentInspector {
  size = 0;
  problem: string | undefined;
  private head = new Uint8Array(SNIFF_BYTES);
  private headLength = 0;
  private readonly text: Utf8Check | undefined;

  constructor(private readonly extension: Extension) {
    if (extension === 'csv' || extension === 'txt') this.text = new Utf8Check();
  }

  /** Looks at the next chunk of the file. */
  add(chunk: Uint8Array): void {
    this.size += chunk.byteLength;
    if (this.headLength < SNIFF_BYTES) {
      const take = chunk.subarray(0, SNIFF_BYTES - this.headLength);
      this.head.set(take, this.headLength);
      this.headLength += take.byteLength;
      if (this.headLength === SNIFF_BYTES) this.checkSignature();
    }
    if (this.text && !this.problem && !this.text.add(chunk)) this.problem = contentMismatch(this.extension);
  }

  /** Called at the end of the file: checks what could not be decided while streaming. */
  finish(): void {
    if (this.problem) return;
    if (this.size === 0) {
      this.problem = 'must not be empty';
      return;
    }
    if (this.headLength < SNIFF_BYTES) this.checkSignature();
    if (this.text && !this.problem && !this.text.finish()) this.problem = contentMismatch(this.extension);
  }

  private checkSignature(): void {
    if (!signatureMatches(this.extension, this.head.subarray(0, this.headLength))) this.problem = contentMismatch(this.extension);
  }
}

/** The message for a file whose content does not match its extension. */
export function contentMismatch(extension: string): string {
  return `content does not match the .${extension} extension`;
}

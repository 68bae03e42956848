/** Reads bytes start..end (inclusive) of a stored object. */
export type RangeReader = (start: number, end: number) => Promise<Uint8Array>;

const EOCD_SIGNATURE = 0x06054b50;
const CENTRAL_SIGNATURE = 0x02014b50;
const EOCD_MIN = 22;
const MAX_COMMENT = 0xffff;
// An Office file's central directory is a few KB; refuse absurd ones instead of reading them.
const MAX_CENTRAL_DIRECTORY = 4 * 1024 * 1024;

function view(bytes: Uint8Array): DataView {
  return new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

function findEndOfCentralDirectory(tail: Uint8Array): number {
  const dv = view(tail);
  for (let at = tail.length - EOCD_MIN; at >= 0; at--) if (dv.getUint32(at, true) === EOCD_SIGNATURE) return at;
  return -1;
}

function hasEntryUnder(directory: Uint8Array, folder: string): boolean {
  const dv = view(directory);
  const decoder = new TextDecoder();
  let at = 0;
  while (at + 46 <= directory.length && dv.getUint32(at, true) === CENTRAL_SIGNATURE) {
    const nameLength = dv.getUint16(at + 28, true);
    const extraLength = dv.getUint16(at + 30, true);
    const commentLength = dv.getUint16(at + 32, true);
    const name = decoder.decode(directory.subarray(at + 46, at + 46 + nameLength));
    if (name.startsWith(folder)) return true;
    at += 46 + nameLength + extraLength + commentLength;
  }
  return false;
}

/**
 * Whether a stored ZIP archive of `size` bytes lists an entry under `folder` (e.g. `word/`),
 * read from its central directory with at most two ranged reads.
 */
export async function zipHasFolder(read: RangeReader, size: number, folder: string): Promise<boolean> {
  if (size < EOCD_MIN) return false;
  const tailStart = Math.max(0, size - (EOCD_MIN + MAX_COMMENT));
  const tail = await read(tailStart, size - 1);
  const eocd = findEndOfCentralDirectory(tail);
  if (eocd < 0) return false;
  const directorySize = view(tail).getUint32(eocd + 12, true);
  const directoryOffset = view(tail).getUint32(eocd + 16, true);
  if (directorySize > MAX_CENTRAL_DIRECTORY || directoryOffset + directorySize > size) return false;
  const inTail = directoryOffset >= tailStart;
  const directory = inTail
    ? tail.subarray(directoryOffset - tailStart, directoryOffset - tailStart + directorySize)
    : directorySize === 0
      ? new Uint8Array(0)
      : await read(directoryOffset, directoryOffset + directorySize - 1);
  return hasEntryUnder(directory, folder);
}

// Turns generated bodies into the exact bytes sent, so inputs that JSON.stringify or FormData
// cannot express still reach the server: raw JSON tokens (`1e400`, `"\ud800"`), bytes that are
// not UTF-8, NUL bytes inside multipart headers.

/** A JSON token written verbatim (`1e400`, `NaN`, `"\ud800"`, 70 nested arrays). */
export class RawJson {
  constructor(readonly text: string) {}
}

/** A JSON string whose content includes bytes that are not valid UTF-8. */
export class BadUtf8String {
  constructor(
    readonly before: string,
    readonly bytes: number[],
    readonly after: string,
  ) {}
}

const encoder = new TextEncoder();

/** The JSON text of a generated value (RawJson written as-is, BadUtf8String as a marker). */
export function jsonText(value: unknown, markers: BadUtf8String[] = []): string {
  if (value instanceof RawJson) return value.text;
  if (value instanceof BadUtf8String) {
    markers.push(value);
    return `"\u0001BAD${markers.length - 1}\u0001"`;
  }
  if (Array.isArray(value)) return `[${value.map((v) => jsonText(v, markers)).join(',')}]`;
  if (value && typeof value === 'object') {
    const members = Object.entries(value).filter(([, v]) => v !== undefined);
    return `{${members.map(([k, v]) => `${JSON.stringify(k)}:${jsonText(v, markers)}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

/** The bytes of a generated JSON value, with the invalid UTF-8 of BadUtf8Strings spliced in. */
export function jsonBytes(value: unknown): Uint8Array {
  const markers: BadUtf8String[] = [];
  const text = jsonText(value, markers);
  if (markers.length === 0) return encoder.encode(text);
  const pieces: Uint8Array[] = [];
  let rest = text;
  markers.forEach((marker, i) => {
    const token = `"\u0001BAD${i}\u0001"`;
    const at = rest.indexOf(token);
    pieces.push(encoder.encode(rest.slice(0, at)));
    pieces.push(concatBytes(encoder.encode(JSON.stringify(marker.before).slice(0, -1)), Uint8Array.from(marker.bytes)));
    pieces.push(encoder.encode(JSON.stringify(marker.after).slice(1)));
    rest = rest.slice(at + token.length);
  });
  pieces.push(encoder.encode(rest));
  return concatBytes(...pieces);
}

/** One part of a hand-built multipart body; header values are written byte for byte. */
export interface MultipartPart {
  name: string;
  filename?: string | Uint8Array;
  contentType?: string;
  data: Uint8Array | string;
}

/** A multipart/form-data body built by hand (so names and filenames may hold NUL or bad bytes). */
export function multipartBytes(parts: MultipartPart[], boundary: string, { closed = true } = {}): Uint8Array {
  const chunks: Uint8Array[] = [];
  for (const part of parts) {
    const filename = part.filename === undefined ? [] : [encoder.encode('; filename="'), asBytes(part.filename), encoder.encode('"')];
    chunks.push(
      encoder.encode(`--${boundary}\r\nContent-Disposition: form-data; name="`),
      asBytes(part.name),
      encoder.encode('"'),
      ...filename,
      encoder.encode(part.contentType ? `\r\nContent-Type: ${part.contentType}` : ''),
      encoder.encode('\r\n\r\n'),
      asBytes(part.data),
      encoder.encode('\r\n'),
    );
  }
  if (closed) chunks.push(encoder.encode(`--${boundary}--\r\n`));
  return concatBytes(...chunks);
}

function asBytes(value: string | Uint8Array): Uint8Array {
  return typeof value === 'string' ? encoder.encode(value) : value;
}

/** The bytes of several arrays one after the other. */
export function concatBytes(...parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

import { describe, expect, test } from 'bun:test';
import { ContentInspector } from '../services/documents/src/uploads/file-types.ts';
import { MultipartReader, multipartBoundary } from '../services/documents/src/uploads/multipart.ts';

const encoder = new TextEncoder();

function chunked(bytes: Uint8Array, sizes: () => number): ReadableStream<Uint8Array> {
  let at = 0;
  return new ReadableStream({
    pull(controller) {
      if (at >= bytes.length) return controller.close();
      const size = Math.max(1, sizes());
      controller.enqueue(bytes.slice(at, at + size));
      at += size;
    },
  });
}

async function parseAll(stream: ReadableStream<Uint8Array>, boundary: string) {
  const reader = new MultipartReader(stream, boundary);
  const parts: { name: string; filename?: string; body: Uint8Array }[] = [];
  for (let part = await reader.nextPart(); part; part = await reader.nextPart()) {
    const chunks: Uint8Array[] = [];
    for (let c = await reader.readChunk(); c; c = await reader.readChunk()) chunks.push(c);
    parts.push({
      name: part.name,
      ...(part.filename !== undefined ? { filename: part.filename } : {}),
      body: new Uint8Array(Buffer.concat(chunks)),
    });
  }
  return parts;
}

/** A seeded generator so a failure can be reproduced. */
function random(seed: number) {
  let s = seed;
  return () => {
    s = (s * 1103515245 + 12345) & 0x7fffffff;
    return s / 0x7fffffff;
  };
}

describe('streaming multipart reader', () => {
  const boundary = '----crmBoundary7MA4YWxk';
  // File content full of near-delimiters: CRLF, "--", partial boundaries.
  const tricky = encoder.encode(`\r\n--\r\n----crmBoundary7MA4\r\n--${boundary.slice(0, -1)}X\r\r\n-`);
  const binary = Uint8Array.from({ length: 5000 }, (_, i) => (i * 7919) % 256);
  const file = new Uint8Array([...tricky, ...binary, ...tricky]);
  const body = new Uint8Array([
    ...encoder.encode(`preamble\r\n--${boundary}\r\nContent-Disposition: form-data; name="name"\r\n\r\nQ3 réport\r\n`),
    ...encoder.encode(
      `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="a \\"b\\".pdf"\r\nContent-Type: application/pdf\r\n\r\n`,
    ),
    ...file,
    ...encoder.encode(
      `\r\n--${boundary}\r\nContent-Disposition: form-data; name="empty"; filename*=UTF-8''%C3%A9t%C3%A9.txt\r\n\r\n\r\n--${boundary}--\r\nepilogue`,
    ),
  ]);

  for (const seed of [1, 2, 3, 4, 5, 6, 7, 8]) {
    test(`random chunk sizes (seed ${seed}) give back the exact parts`, async () => {
      const next = random(seed);
      const parts = await parseAll(
        chunked(body, () => Math.floor(next() * (seed % 2 ? 40 : 3000))),
        boundary,
      );
      expect(parts.map((p) => [p.name, p.filename])).toEqual([
        ['name', undefined],
        ['file', 'a "b".pdf'],
        ['empty', 'été.txt'],
      ]);
      expect(new TextDecoder().decode(parts[0]!.body)).toBe('Q3 réport');
      expect(parts[1]!.body).toEqual(file);
      expect(parts[2]!.body.length).toBe(0);
    });
  }

  test('a body that ends before the closing boundary is a 400 bad_request', async () => {
    const cut = body.slice(0, body.length - 40);
    await expect(
      parseAll(
        chunked(cut, () => 100),
        boundary,
      ),
    ).rejects.toMatchObject({ type: 'bad_request' });
  });

  test('boundary parameter, quoted or not; other content types have none', () => {
    expect(multipartBoundary('multipart/form-data; boundary=abc')).toBe('abc');
    expect(multipartBoundary('multipart/form-data; charset=utf-8; boundary="a b"')).toBe('a b');
    expect(multipartBoundary('application/json')).toBeUndefined();
  });
});

describe('releaseChunks: each body chunk is freed once the reader moves past it', () => {
  const boundary = '----crmReleaseBoundary';
  const file = Uint8Array.from({ length: 600 * 1024 }, (_, i) => (i * 7919 + (i >> 9)) % 256);
  const body = new Uint8Array([
    ...encoder.encode(`--${boundary}\r\nContent-Disposition: form-data; name="name"\r\n\r\nQ3 réport\r\n`),
    ...encoder.encode(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="a.pdf"\r\n\r\n`),
    ...file,
    ...encoder.encode(`\r\n--${boundary}--\r\n`),
  ]);

  for (const seed of [11, 12, 13]) {
    test(`chunks of 16–80 KiB (seed ${seed}): the same parts, copied as they come, and the chunks passed are detached`, async () => {
      const next = random(seed);
      const sent: Uint8Array[] = [];
      let at = 0;
      const stream = new ReadableStream<Uint8Array>({
        pull(controller) {
          if (at >= body.length) return controller.close();
          const size = 16 * 1024 + Math.floor(next() * 64 * 1024);
          const chunk = body.slice(at, at + size); // a buffer of its own, as a request body chunk is
          sent.push(chunk);
          controller.enqueue(chunk);
          at += size;
        },
      });
      const reader = new MultipartReader(stream, boundary, { releaseChunks: true });
      const parts: { name: string; body: Uint8Array }[] = [];
      for (let part = await reader.nextPart(); part; part = await reader.nextPart()) {
        const copies: Uint8Array[] = [];
        for (let c = await reader.readChunk(); c; c = await reader.readChunk()) copies.push(Uint8Array.prototype.slice.call(c));
        parts.push({ name: part.name, body: new Uint8Array(Buffer.concat(copies)) });
      }
      expect(parts.map((p) => p.name)).toEqual(['name', 'file']);
      expect(new TextDecoder().decode(parts[0]!.body)).toBe('Q3 réport');
      expect(parts[1]!.body).toEqual(file);
      const detached = sent.filter((chunk) => chunk.buffer.byteLength === 0).length;
      // Every chunk but the one still held at the end (and a last one below 16 KiB) was freed.
      expect(detached).toBeGreaterThanOrEqual(sent.length - 2);
    });
  }

  test('without the option no chunk is touched', async () => {
    const sent: Uint8Array[] = [];
    let at = 0;
    const stream = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (at >= body.length) return controller.close();
        const chunk = body.slice(at, at + 32 * 1024);
        sent.push(chunk);
        controller.enqueue(chunk);
        at += chunk.length;
      },
    });
    const reader = new MultipartReader(stream, boundary);
    for (let part = await reader.nextPart(); part; part = await reader.nextPart()) while (await reader.readChunk());
    expect(sent.every((chunk) => chunk.buffer.byteLength > 0)).toBe(true);
  });
});

describe('ContentInspector: UTF-8 of csv/txt checked chunk by chunk without decoding', () => {
  const fatal = new TextDecoder('utf-8', { fatal: true });
  const isText = (bytes: Uint8Array) => {
    if (bytes.includes(0)) return false;
    try {
      fatal.decode(bytes);
      return true;
    } catch {
      return false;
    }
  };
  const inspect = (bytes: Uint8Array, next: () => number) => {
    const inspector = new ContentInspector('txt');
    for (let at = 0; at < bytes.length; ) {
      const size = 1 + Math.floor(next() * 9);
      inspector.add(bytes.subarray(at, at + size));
      at += size;
    }
    inspector.finish();
    return inspector.problem === undefined;
  };
  // One- to four-byte characters, so sequences are split at every possible place.
  const text = encoder.encode('a,é;€\n𝄞 x ñ ü 中文 🙂 '.repeat(40));
  const invalid: Record<string, number[]> = {
    'a sequence cut at the end': [0xe2, 0x82],
    'an overlong encoding': [0xc0, 0x80],
    'a surrogate': [0xed, 0xa0, 0x80],
    'a stray continuation byte': [0x80],
    'a byte that never occurs': [0xf5, 0x80, 0x80, 0x80],
    'a lead byte followed by ASCII': [0xe2, 0x41, 0x42],
    NUL: [0x00],
  };

  for (const seed of [21, 22, 23, 24]) {
    test(`random chunking (seed ${seed}): valid text passes; each kind of invalid byte sequence anywhere fails, as the fatal decoder says`, () => {
      const next = random(seed);
      expect(inspect(text, next)).toBe(true);
      for (const [what, bad] of Object.entries(invalid)) {
        const at = what === 'a sequence cut at the end' ? text.length : Math.floor(next() * text.length);
        // Inserted at a character boundary (before an ASCII byte or at the end).
        let cut = at;
        while (cut < text.length && (text[cut] as number) >= 0x80) cut++;
        const bytes = new Uint8Array([...text.subarray(0, cut), ...bad, ...text.subarray(cut)]);
        expect({ what, passes: inspect(bytes, next) }).toEqual({ what, passes: isText(bytes) });
        expect(isText(bytes)).toBe(false);
      }
    });
  }
});

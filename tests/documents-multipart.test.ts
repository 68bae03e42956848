import { describe, expect, test } from 'bun:test';
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

// Multipart bodies for the two upload routes: a real file of an allowed type, and hostile
// variants (NUL in a field value or filename, bytes that are not UTF-8, bad category ids,
// missing or empty files, broken multipart framing).
import fc from 'fast-check';
import { exe, samples } from '../documents-fixtures.ts';
import type { Expectation } from './hostile.ts';
import { PoolRef } from './pool.ts';
import { word } from './values.ts';
import type { MultipartPart } from './wire.ts';

/** A multipart part as generated: its value may still be a reference to resolve. */
export type GeneratedPart = Omit<MultipartPart, 'data'> & { data: MultipartPart['data'] | PoolRef };

export interface MultipartBody {
  kind: 'multipart';
  parts: GeneratedPart[];
  /** The boundary written in the body; the Content-Type header may name another one. */
  boundary: string;
  contentType: string;
  closed: boolean;
}

export interface UploadVariant {
  label: string;
  body: MultipartBody;
  expect?: Expectation;
}

const encoder = new TextEncoder();
const BOUNDARY = 'fuzzBoundary7MA4YWxkTrZu0gW';
const NUL_IN_MULTIPART: Expectation = { check: '§19 NUL in a multipart field or filename → 422', statuses: [422] };
const FILE_RULES: Expectation = { check: '§15 missing, empty or mismatched file → 422', statuses: [422] };
const MULTIPART_INT_RANGE: Expectation = { check: '§19 out-of-range integer in a body → 422', statuses: [422] };

const fileKinds = ['txt', 'csv', 'png', 'pdf', 'gif'] as const;
const categoryRef = fc.nat(60).map((n) => new PoolRef('document-categories', 'id', n));

const multipart = (parts: GeneratedPart[], options: Partial<MultipartBody> = {}): MultipartBody => ({
  kind: 'multipart',
  parts,
  boundary: BOUNDARY,
  contentType: `multipart/form-data; boundary=${BOUNDARY}`,
  closed: true,
  ...options,
});
const filePart = (filename: string | Uint8Array, data: Uint8Array): GeneratedPart => ({
  name: 'file',
  filename,
  contentType: 'application/octet-stream',
  data,
});

/** A valid upload: an allowed file whose extension matches its bytes, with optional fields. */
export const validUpload: fc.Arbitrary<UploadVariant> = fc
  .tuple(fc.constantFrom(...fileKinds), word, fc.option(word, { nil: undefined }), fc.option(categoryRef, { nil: undefined }))
  .map(([ext, base, name, category]) => {
    const parts: GeneratedPart[] = [filePart(`${base}.${ext}`, (samples[ext] as () => Uint8Array)())];
    if (name !== undefined) parts.push({ name: 'name', data: name });
    if (category !== undefined) parts.push({ name: 'document_category_id', data: category });
    return { label: `valid ${ext} upload`, body: multipart(parts) };
  });

const txt = () => encoder.encode('plain notes\n');
const withFile = (label: string, extra: GeneratedPart[], expect?: Expectation): UploadVariant => ({
  label,
  body: multipart([filePart('notes.txt', txt()), ...extra]),
  expect,
});

/** Uploads with a NUL in a field value, the filename, or a text file's bytes. */
export const nulUpload: fc.Arbitrary<UploadVariant> = fc.constantFrom<UploadVariant>(
  withFile('NUL in field name', [{ name: 'name', data: 'Q3\u0000report' }], NUL_IN_MULTIPART),
  withFile('NUL in field document_category_id', [{ name: 'document_category_id', data: '1\u0000' }], NUL_IN_MULTIPART),
  withFile('NUL in an unknown field', [{ name: 'note', data: 'x\u0000y' }], NUL_IN_MULTIPART),
  { label: 'NUL in the filename', body: multipart([filePart('no\u0000tes.txt', txt())]), expect: NUL_IN_MULTIPART },
  { label: 'NUL bytes in a .txt file', body: multipart([filePart('nul.txt', encoder.encode('a\u0000b\n'))]), expect: FILE_RULES },
);

/** Uploads that break a file rule or the multipart framing, or carry odd field values. */
export const hostileUpload: fc.Arbitrary<UploadVariant> = fc.oneof(
  fc
    .constantFrom('2147483648', '-1', '9007199254740993')
    .map((id) => withFile(`document_category_id=${id}`, [{ name: 'document_category_id', data: id }], MULTIPART_INT_RANGE)),
  fc
    .constantFrom('0', 'abc', '1e400', '1.5', '', ' 1')
    .map((id) => withFile(`document_category_id=${JSON.stringify(id)}`, [{ name: 'document_category_id', data: id }])),
  fc.constantFrom<UploadVariant>(
    { label: 'no file part', body: multipart([{ name: 'name', data: 'x' }]), expect: FILE_RULES },
    { label: 'empty file', body: multipart([filePart('empty.txt', new Uint8Array(0))]), expect: FILE_RULES },
    { label: 'disallowed type .exe', body: multipart([filePart('tool.exe', exe())]), expect: FILE_RULES },
    { label: '.pdf holding text', body: multipart([filePart('fake.pdf', txt())]), expect: FILE_RULES },
    { label: 'filename not UTF-8', body: multipart([filePart(Uint8Array.from([0x66, 0xff, 0xfe, 0x2e, 0x74, 0x78, 0x74]), txt())]) },
    {
      label: 'filename with an encoded lone surrogate',
      body: multipart([filePart(Uint8Array.from([0x61, 0xed, 0xa0, 0x80, 0x2e, 0x74, 0x78, 0x74]), txt())]),
    },
    withFile('name not UTF-8', [{ name: 'name', data: Uint8Array.from([0x61, 0xc0, 0xaf]) }]),
    withFile('name of 256 characters', [{ name: 'name', data: 'n'.repeat(256) }]),
    { label: 'filename of 300 characters', body: multipart([filePart(`${'a'.repeat(300)}.txt`, txt())]) },
    { label: 'filename with directories', body: multipart([filePart('../../etc/passwd.txt', txt())]) },
    { label: 'file part without filename', body: multipart([{ name: 'file', data: txt() }]) },
    { label: 'two file parts', body: multipart([filePart('a.txt', txt()), filePart('b.png', (samples.png as () => Uint8Array)())]) },
    { label: 'no closing boundary', body: multipart([filePart('a.txt', txt())], { closed: false }) },
    {
      label: 'boundary differs from the header',
      body: multipart([filePart('a.txt', txt())], { contentType: 'multipart/form-data; boundary=other' }),
    },
    { label: 'multipart without boundary', body: multipart([filePart('a.txt', txt())], { contentType: 'multipart/form-data' }) },
    {
      label: '200 unknown parts',
      body: multipart([filePart('a.txt', txt()), ...Array.from({ length: 200 }, (_, i) => ({ name: `f${i}`, data: 'v' }))]),
    },
  ),
);

import { expect, test } from 'bun:test';
import { filenameOf, uploadForm } from './files.ts';

test('file names from Content-Disposition: filename* (RFC 6266) first, then filename', () => {
  expect(filenameOf(`attachment; filename="Q3 report.pdf"; filename*=UTF-8''Q3%20r%C3%A9port.pdf`)).toBe('Q3 réport.pdf');
  expect(filenameOf('attachment; filename="a \\"b\\".txt"')).toBe('a "b".txt');
  expect(filenameOf('attachment; filename=plain.csv')).toBe('plain.csv');
  expect(filenameOf(`attachment; filename*=UTF-8''%E0%A4%A; filename="fallback.txt"`)).toBe('fallback.txt');
  expect(filenameOf('inline')).toBeNull();
  expect(filenameOf(null)).toBeNull();
});

test('an upload is the file part plus the fields that have a value', async () => {
  const form = uploadForm(new TextEncoder().encode('hello'), {
    params: { identifier: 'x' },
    filename: 'hello.txt',
    contentType: 'text/plain',
    name: 'Greeting',
    document_category_id: 7,
    idempotencyKey: 'k',
  });
  expect([...form.keys()]).toEqual(['file', 'name', 'document_category_id']);
  const file = form.get('file') as File;
  expect(file.name).toBe('hello.txt');
  expect(file.type).toStartWith('text/plain');
  expect(await file.text()).toBe('hello');
  expect(form.get('document_category_id')).toBe('7');
  expect(() => uploadForm('x', {})).toThrow('filename');
});

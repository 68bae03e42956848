import { deflateSync } from 'node:zlib';
import { ListMultipartUploadsCommand, ListObjectsV2Command, PutObjectCommand } from '@aws-sdk/client-s3';
import { s3Client } from '@crm/stack';
import { pollUntil, type Stack, type TestTenant } from '@crm/testing';

/** Real sample files of every allowed type, built in code (no binary fixtures in the repo). */

const encoder = new TextEncoder();
const bytes = (...parts: (Uint8Array | number[] | string)[]) => {
  const chunks = parts.map((p) => (typeof p === 'string' ? encoder.encode(p) : p instanceof Uint8Array ? p : Uint8Array.from(p)));
  const out = new Uint8Array(chunks.reduce((n, c) => n + c.length, 0));
  let at = 0;
  for (const c of chunks) {
    out.set(c, at);
    at += c.length;
  }
  return out;
};
const fromBase64 = (b64: string) => Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));

const CRC_TABLE = Array.from({ length: 256 }, (_, n) => {
  let c = n;
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  return c >>> 0;
});
function crc32(data: Uint8Array): number {
  let c = 0xffffffff;
  for (const b of data) c = (CRC_TABLE[(c ^ b) & 0xff] as number) ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}
const u32be = (n: number) => [(n >>> 24) & 0xff, (n >>> 16) & 0xff, (n >>> 8) & 0xff, n & 0xff];
const u16le = (n: number) => [n & 0xff, (n >>> 8) & 0xff];
const u32le = (n: number) => [n & 0xff, (n >>> 8) & 0xff, (n >>> 16) & 0xff, (n >>> 24) & 0xff];

/** A 1×1 RGB PNG with correct chunk CRCs and a zlib-compressed scanline. */
export function png(): Uint8Array {
  const chunk = (type: string, data: Uint8Array) => bytes(u32be(data.length), type, data, u32be(crc32(bytes(type, data))));
  const ihdr = bytes(u32be(1), u32be(1), [8, 2, 0, 0, 0]);
  const idat = new Uint8Array(deflateSync(Uint8Array.from([0, 255, 0, 0])));
  return bytes(
    [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a],
    chunk('IHDR', ihdr),
    chunk('IDAT', idat),
    chunk('IEND', new Uint8Array(0)),
  );
}

/** A one-page PDF with a correct cross-reference table. */
export function pdf(): Uint8Array {
  const objects = [
    '<< /Type /Catalog /Pages 2 0 R >>',
    '<< /Type /Pages /Kids [3 0 R] /Count 1 >>',
    '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 200 200] >>',
  ];
  let body = '%PDF-1.4\n';
  const offsets: number[] = [];
  objects.forEach((o, i) => {
    offsets.push(body.length);
    body += `${i + 1} 0 obj\n${o}\nendobj\n`;
  });
  const xref = body.length;
  body += `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n`;
  for (const off of offsets) body += `${String(off).padStart(10, '0')} 00000 n \n`;
  body += `trailer\n<< /Size ${objects.length + 1} /Root 1 0 R >>\nstartxref\n${xref}\n%%EOF\n`;
  return encoder.encode(body);
}

/** A 1×1 baseline JPEG (JFIF). */
export const jpeg = () =>
  fromBase64(
    '/9j/4AAQSkZJRgABAQEASABIAAD/2wBDAAMCAgICAgMCAgIDAwMDBAYEBAQEBAgGBgUGCQgKCgkICQkKDA8MCgsOCwkJDRENDg8QEBEQCgwSExIQEw8QEBD/yQALCAABAAEBAREA/8wABgAQEAX/2gAIAQEAAD8A0s8g/9k=',
  );
/** A 1×1 GIF89a. */
export const gif = () => fromBase64('R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7');
/** A 1×1 lossless WebP (RIFF container). */
export const webp = () => fromBase64('UklGRhoAAABXRUJQVlA4TA0AAAAvAAAAEAcQERGIiP4HAA==');

/** A compound-file (OLE2) header block as Word 97 and Excel 97 files start with. */
export function ole2(): Uint8Array {
  const header = new Uint8Array(512);
  header.set([0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1]);
  header.set([0x3e, 0x00, 0x03, 0x00, 0xfe, 0xff, 0x09, 0x00], 24); // minor/major version, byte order, sector shift
  return header;
}

/** A stored (uncompressed) ZIP archive with the given entries, built by hand. */
export function zip(entries: Record<string, string>): Uint8Array {
  const locals: Uint8Array[] = [];
  const centrals: Uint8Array[] = [];
  let offset = 0;
  for (const [name, text] of Object.entries(entries)) {
    const data = encoder.encode(text);
    const nameBytes = encoder.encode(name);
    const crc = crc32(data);
    const common = [
      ...u16le(0),
      ...u16le(0),
      ...u16le(0),
      ...u16le(0x21),
      ...u32le(crc),
      ...u32le(data.length),
      ...u32le(data.length),
      ...u16le(nameBytes.length),
      ...u16le(0),
    ];
    const local = bytes([0x50, 0x4b, 0x03, 0x04], u16le(20), common, nameBytes, data);
    centrals.push(
      bytes([0x50, 0x4b, 0x01, 0x02], u16le(20), u16le(20), common, u16le(0), u16le(0), u16le(0), u32le(0), u32le(offset), nameBytes),
    );
    locals.push(local);
    offset += local.length;
  }
  const directory = bytes(...centrals);
  const end = bytes(
    [0x50, 0x4b, 0x05, 0x06],
    u16le(0),
    u16le(0),
    u16le(centrals.length),
    u16le(centrals.length),
    u32le(directory.length),
    u32le(offset),
    u16le(0),
  );
  return bytes(...locals, directory, end);
}

const contentTypes = '<?xml version="1.0" encoding="UTF-8"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"/>';
/** A minimal Word document package (has `word/` entries). */
export const docx = () =>
  zip({ '[Content_Types].xml': contentTypes, '_rels/.rels': '<Relationships/>', 'word/document.xml': '<w:document/>' });
/** A minimal Excel workbook package (has `xl/` entries). */
export const xlsx = () => zip({ '[Content_Types].xml': contentTypes, '_rels/.rels': '<Relationships/>', 'xl/workbook.xml': '<workbook/>' });
/** A Windows executable header (what an .exe renamed to .txt starts with). */
export const exe = () => bytes('MZ', [0x90, 0x00, 0x03, 0x00, 0x00, 0x00, 0x04, 0x00], new Uint8Array(56));

/** One sample per allowed extension. */
export const samples: Record<string, () => Uint8Array> = {
  pdf,
  doc: ole2,
  docx,
  xls: ole2,
  xlsx,
  csv: () => encoder.encode('name,amount\nAcme Ltd,12.50\nÉclair SA,3\n'),
  txt: () => encoder.encode('Meeting notes — “quoted” ✓\n'),
  png,
  jpg: jpeg,
  jpeg,
  gif,
  webp,
};

/** A multipart form with a file and optional fields (as a browser sends it). */
export function uploadForm(fileName: string, content: Uint8Array | Blob, fields: Record<string, string> = {}): FormData {
  const form = new FormData();
  for (const [key, value] of Object.entries(fields)) form.set(key, value);
  form.set('file', content instanceof Blob ? content : new Blob([content as Uint8Array<ArrayBuffer>]), fileName);
  return form;
}

/** Uploads a file to a contact through the gateway. */
export function uploadToContact(
  tenant: TestTenant,
  identifier: string | number,
  fileName: string,
  content: Uint8Array | Blob,
  fields?: Record<string, string>,
) {
  return tenant.request('POST', `/v1/contacts/${encodeURIComponent(String(identifier))}/documents`, {
    raw: uploadForm(fileName, content, fields),
  });
}

/** Uploads a file to an opportunity through the gateway. */
export function uploadToOpportunity(
  tenant: TestTenant,
  id: number,
  fileName: string,
  content: Uint8Array | Blob,
  fields?: Record<string, string>,
) {
  return tenant.request('POST', `/v1/opportunities/${id}/documents`, { raw: uploadForm(fileName, content, fields) });
}

/** Creates a contact through the gateway and returns its id. */
export async function createContact(tenant: TestTenant, fields: Record<string, unknown> = {}): Promise<number> {
  const res = await tenant.request('POST', '/v1/contacts', {
    body: { name: `Contact ${crypto.randomUUID().slice(0, 8)}`, type: 'client', ...fields },
  });
  if (res.status !== 201) throw new Error(`contact creation failed: ${res.status} ${res.text}`);
  return res.body.data.id;
}

/** Creates an opportunity for a new contact through the gateway and returns its id. */
export async function createOpportunity(tenant: TestTenant, contactId?: number): Promise<number> {
  const enterprise = contactId ?? (await createContact(tenant));
  const res = await tenant.request('POST', '/v1/opportunities', {
    body: { name: `Deal ${crypto.randomUUID().slice(0, 8)}`, enterprise_identifier: String(enterprise) },
  });
  if (res.status !== 201) throw new Error(`opportunity creation failed: ${res.status} ${res.text}`);
  return res.body.data.id;
}

/** Keys of the tenant's objects in the run's bucket, and unfinished multipart uploads. */
export async function storedObjects(stack: Stack, tenantId: string): Promise<{ keys: string[]; pendingUploads: number }> {
  const s3 = s3Client(stack.s3);
  try {
    const listed = await s3.send(new ListObjectsV2Command({ Bucket: stack.bucket, Prefix: `${tenantId}/` }));
    const pending = await s3.send(new ListMultipartUploadsCommand({ Bucket: stack.bucket }));
    return {
      keys: (listed.Contents ?? []).map((o) => o.Key as string),
      pendingUploads: (pending.Uploads ?? []).filter((u) => u.Key?.startsWith(`${tenantId}/`)).length,
    };
  } finally {
    s3.destroy();
  }
}

/** Puts an object straight into the run's bucket (for rows created without the API). */
export async function putObject(stack: Stack, key: string, body: Uint8Array): Promise<void> {
  const s3 = s3Client(stack.s3);
  try {
    await s3.send(new PutObjectCommand({ Bucket: stack.bucket, Key: key, Body: body }));
  } finally {
    s3.destroy();
  }
}

/** Number of document rows of a tenant in the database. */
export async function documentRows(stack: Stack, tenantId: string): Promise<number> {
  const { rows } = await stack.sql('select count(*)::int as n from documents.documents where tenant_id = $1', [tenantId]);
  return rows[0].n;
}

/** One part of a hand-built multipart body: header values are written byte for byte (NUL, bytes that are not UTF-8). */
export interface RawPart {
  name: string | Uint8Array;
  filename?: string | Uint8Array;
  data: string | Uint8Array;
}

const asBytes = (value: string | Uint8Array) => (typeof value === 'string' ? encoder.encode(value) : value);

/** A multipart/form-data body built by hand, for inputs FormData cannot express. */
export function rawMultipart(parts: RawPart[], boundary = 'crmRawBoundary9x'): { body: Uint8Array; contentType: string } {
  const chunks: Uint8Array[] = [];
  for (const part of parts) {
    chunks.push(encoder.encode(`--${boundary}\r\nContent-Disposition: form-data; name="`), asBytes(part.name), encoder.encode('"'));
    if (part.filename !== undefined) chunks.push(encoder.encode('; filename="'), asBytes(part.filename), encoder.encode('"'));
    chunks.push(encoder.encode('\r\n\r\n'), asBytes(part.data), encoder.encode('\r\n'));
  }
  chunks.push(encoder.encode(`--${boundary}--\r\n`));
  return { body: bytes(...chunks), contentType: `multipart/form-data; boundary=${boundary}` };
}

/** Sends a hand-built multipart upload to `path` through the gateway. */
export function rawUpload(tenant: TestTenant, path: string, parts: RawPart[]) {
  const { body, contentType } = rawMultipart(parts);
  return tenant.request('POST', path, { raw: body as Uint8Array<ArrayBuffer>, headers: { 'content-type': contentType } });
}

/** An event as the events feed lists it (contract §25): what a webhook receiver gets too. */
export interface FeedEvent {
  id: string;
  type: string;
  timestamp: string;
  data: any;
}

/** Every event the feed lists for the tenant now, oldest first. */
export async function listedEvents(tenant: TestTenant): Promise<FeedEvent[]> {
  const events: FeedEvent[] = [];
  for (let page = 1; ; page++) {
    const res = await tenant.request('GET', `/v1/events?per_page=100&page=${page}`);
    if (res.status !== 200) throw new Error(`GET /v1/events → ${res.status} ${res.text}`);
    events.push(...res.body.data);
    if (!res.body.pagination.has_more) return events;
  }
}

const MARK_NAME = 'feed mark';

/**
 * The tenant's document events of every write answered before this call, as the feed lists them
 * (oldest first) — complete, so a test can also see that a refused write added none. A mark (a
 * text file named `feed mark`, uploaded to a marker contact and deleted again) is written after
 * them, and the feed is read once the mark's `document.deleted` is listed: documents relays its
 * outbox in order and the feed lists an event only after every earlier one of the stream, so an
 * earlier document event is listed by then. The marks' events are left out (each uses a document id).
 */
export async function documentEvents(tenant: TestTenant): Promise<FeedEvent[]> {
  const marker = await createContact(tenant, { name: `feed marker ${crypto.randomUUID()}` });
  const mark = await uploadToContact(tenant, marker, 'mark.txt', encoder.encode('mark\n'), { name: MARK_NAME });
  if (mark.status !== 201) throw new Error(`mark upload → ${mark.status} ${mark.text}`);
  const markId = mark.body.data.id;
  const gone = await tenant.request('DELETE', `/v1/documents/${markId}`);
  if (gone.status !== 200) throw new Error(`mark deletion → ${gone.status} ${gone.text}`);
  const events = await pollUntil(
    'the feed to list the mark',
    () => listedEvents(tenant),
    (listed) => listed.some((e) => e.type === 'document.deleted' && e.data.id === markId),
    { everyMs: 50, show: (listed) => listed.map((e) => e.type) },
  );
  const marks = new Set(events.filter((e) => e.type === 'document.created' && e.data.name === MARK_NAME).map((e) => e.data.id));
  return events.filter((e) => e.type.startsWith('document.') && !marks.has(e.data.id));
}

/** The types of the settled document events about one document, oldest first. */
export async function eventTypesOf(tenant: TestTenant, documentId: number): Promise<string[]> {
  return (await documentEvents(tenant)).filter((e) => e.data.id === documentId).map((e) => e.type);
}

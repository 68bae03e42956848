// One real request through the SDK, on whichever runtime runs this file (Node, Deno, Bun):
//   <runtime> smoke.mjs <SDK entry URL> <gateway URL> <API key> <contact name>
// Prints one JSON line with what it saw. tests/sdk.test.ts runs it with Node 20 and Deno.
const args = globalThis.Deno ? globalThis.Deno.args : process.argv.slice(2);
const [entry, baseUrl, apiKey, name] = args;
const runtime = globalThis.Deno
  ? `deno ${globalThis.Deno.version.deno}`
  : globalThis.Bun
    ? `bun ${globalThis.Bun.version}`
    : `node ${process.versions.node}`;

const { createClient } = await import(entry);
const client = createClient({ baseUrl, apiKey });
const created = await client.contacts.create({ name, type: 'client', email: 'smoke@example.test' });
const found = [];
for await (const contact of client.contacts.iterate({ q: name, per_page: 1 })) found.push(contact.id);
let notFound = null;
try {
  await client.contacts.get(`${name} (missing)`);
} catch (error) {
  notFound = { name: error.name, status: error.status, type: error.type, requestId: error.requestId };
}
console.log(
  JSON.stringify({
    runtime,
    status: created.status,
    id: created.data.id,
    etag: created.etag,
    idempotencyKey: created.idempotencyKey,
    found,
    notFound,
  }),
);

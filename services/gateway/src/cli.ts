// Admin CLI (contract §5): wraps the admin HTTP API of a running gateway.
//   npm run admin -- tenant create --name Acme --user ann@acme.test:"Ann Lee" [--read 120] [--write 30]
//   npm run admin -- tenant list
//   npm run admin -- tenant rotate-key <tenant_id>
//   npm run admin -- tenant add-user <tenant_id> --user bob@acme.test:"Bob Roe"
//   npm run admin -- tenant limits <tenant_id> [--read N] [--write N]
// GATEWAY_URL (default http://127.0.0.1:8080) and ADMIN_TOKEN come from the environment.
import { parseArgs } from 'node:util';

const { values, positionals } = parseArgs({
  args: process.argv.slice(2),
  allowPositionals: true,
  options: { name: { type: 'string' }, user: { type: 'string', multiple: true }, read: { type: 'string' }, write: { type: 'string' } },
});
const gatewayUrl = process.env.GATEWAY_URL ?? `http://127.0.0.1:${process.env.GATEWAY_PORT ?? 8080}`;
const token = process.env.ADMIN_TOKEN;

function fail(message: string): never {
  console.error(message);
  process.exit(2);
}

const parseUser = (spec: string) => {
  const at = spec.indexOf(':');
  if (at < 1) fail(`--user must look like email:"Full Name", got ${spec}`);
  return { email: spec.slice(0, at), name: spec.slice(at + 1) };
};

const limits = () => ({
  ...(values.read ? { read_per_minute: Number(values.read) } : {}),
  ...(values.write ? { write_per_minute: Number(values.write) } : {}),
});

async function call(method: string, path: string, body?: unknown) {
  if (!token) fail('ADMIN_TOKEN is not set (npm start prints it)');
  const response = await fetch(gatewayUrl + path, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(body ? { 'content-type': 'application/json' } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  const text = await response.text();
  if (!response.ok) fail(`${response.status} ${text}`);
  console.log(JSON.stringify(JSON.parse(text).data, null, 2));
}

const [resource, action, id] = positionals;
if (resource !== 'tenant') fail('usage: admin tenant create|list|rotate-key|add-user|limits …');
switch (action) {
  case 'create':
    if (!values.name) fail('--name is required');
    await call('POST', '/admin/tenants', { name: values.name, users: (values.user ?? []).map(parseUser), limits: limits() });
    break;
  case 'list':
    await call('GET', '/admin/tenants');
    break;
  case 'rotate-key':
    await call('POST', `/admin/tenants/${id ?? fail('tenant id required')}/rotate-key`);
    break;
  case 'add-user':
    for (const user of values.user ?? fail('--user is required'))
      await call('POST', `/admin/tenants/${id ?? fail('tenant id required')}/users`, parseUser(user));
    break;
  case 'limits':
    await call('PUT', `/admin/tenants/${id ?? fail('tenant id required')}/limits`, limits());
    break;
  default:
    fail(`unknown action ${action}`);
}

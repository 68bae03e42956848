import { type Static, type TObject, Type } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';

/** Raised when the environment does not satisfy a service's config schema; names every bad variable. */
export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid configuration: ${problems.join('; ')}`);
    this.name = 'ConfigError';
  }
}

/**
 * Parses environment variables once against a TypeBox object schema: applies defaults,
 * converts strings to numbers and booleans, and throws ConfigError naming each missing or
 * bad variable.
 */
export function loadConfig<T extends TObject>(schema: T, env: Record<string, string | undefined> = process.env): Static<T> {
  const raw: Record<string, unknown> = {};
  for (const key of Object.keys(schema.properties)) {
    const value = env[key];
    if (value !== undefined && value !== '') raw[key] = value;
  }
  const withDefaults = Value.Default(schema, raw);
  const converted = Value.Convert(schema, withDefaults);
  const problems = new Map<string, string>();
  for (const error of Value.Errors(schema, converted)) {
    const name = error.path.replace(/^\//, '').split('/')[0] || '(root)';
    if (problems.has(name)) continue;
    problems.set(name, error.value === undefined ? `${name} is required` : `${name} is invalid: ${error.message.toLowerCase()}`);
  }
  if (problems.size > 0) throw new ConfigError([...problems.values()]);
  return converted as Static<T>;
}

/** A TCP port number variable with a default. */
export const Port = (defaultPort: number) => Type.Integer({ minimum: 0, maximum: 65535, default: defaultPort });

/** One or more NATS server URLs (`nats://host:port`, `tls://…` or `host:port`), comma-separated. */
const NATS_URL_PATTERN = '^\\s*[^,\\s]+(\\s*,\\s*[^,\\s]+)*\\s*$';

/** The servers of a `NATS_URL` (one URL or a comma-separated list), trimmed, empty entries dropped. */
export function natsServers(url: string): string[] {
  return url
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
}

/** Variables every backend service reads. */
export const commonServiceEnv = {
  DATABASE_URL: Type.String({ pattern: '^postgres(ql)?://', default: 'postgres://postgres@127.0.0.1:5432/crm' }),
  NATS_URL: Type.String({
    default: 'nats://127.0.0.1:4222',
    pattern: NATS_URL_PATTERN,
    description: 'NATS server URL, or a comma-separated list of the servers of a cluster (all are tried; reconnects forever)',
  }),
  NATS_STREAM_REPLICAS: Type.Integer({
    minimum: 1,
    maximum: 5,
    default: 1,
    description:
      'Replicas of the events stream (1 on a single server, 3 on a three-node JetStream cluster); an existing stream is updated to it',
  }),
  DB_POOL_MAX: Type.Integer({
    minimum: 1,
    maximum: 100,
    default: 5,
    description:
      'PostgreSQL connections per process (the pool; the outbox relay holds one more for LISTEN). See deploy/README.md, connection budget',
  }),
  INTERNAL_TOKEN: Type.String({ minLength: 16 }),
  OUTBOX_RETENTION_DAYS: Type.Integer({
    minimum: 1,
    maximum: 3650,
    default: 7,
    description: 'Days a published outbox row is kept (for inspection) before the purge deletes it in batches',
  }),
  EVENTS_STREAM: Type.String({ default: 'CRM_EVENTS' }),
  EVENTS_SUBJECT_PREFIX: Type.String({ default: 'crm.events' }),
  LOG_LEVEL: Type.Union([Type.Literal('debug'), Type.Literal('info'), Type.Literal('warn'), Type.Literal('error')], {
    default: 'info',
  }),
  HOST: Type.String({ default: '127.0.0.1' }),
};

export { Type };

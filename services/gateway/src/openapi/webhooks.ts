/**
 * The OpenAPI 3.1 `webhooks` section (contract §16): one entry per event type of the catalogue
 * of @crm/contracts, whose body is the delivered envelope `{ id, type, timestamp, data }` with
 * `data` the event type's typed payload (the resource schemas, named), and the three Standard
 * Webhooks headers with how to verify them.
 */
import { type EventType, eventCatalog } from '@crm/contracts';
import { describeSchema } from '@crm/http';
import { type TSchema, Type } from '@sinclair/typebox';

type Json = Record<string, any>;

/** `contact.created` → `ContactCreatedEvent`, `product_category.deleted` → `ProductCategoryDeletedEvent`. */
export function eventSchemaName(type: EventType): string {
  return `${type
    .split(/[._]/)
    .map((word) => word.charAt(0).toUpperCase() + word.slice(1))
    .join('')}Event`;
}

/** How a receiver verifies a delivery and answers it (the description of the `Webhook events` tag). */
export const VERIFY_DESCRIPTION = `Deliveries follow [Standard Webhooks](https://www.standardwebhooks.com/): an HTTP POST of the JSON event with three headers.

- \`webhook-id\`: the event id (\`evt_…\`), the same on every retry: use it to drop duplicates (delivery is at least once, best-effort ordered).
- \`webhook-timestamp\`: unix seconds of this attempt: refuse one too far from your clock (5 minutes) to stop replays.
- \`webhook-signature\`: \`v1,<base64 HMAC-SHA256(key, "<webhook-id>.<webhook-timestamp>.<body>")>\`, where the key is the base64-decoded part of the endpoint's
  secret after \`whsec_\` and \`<body>\` is the raw request body, byte for byte. While a rotated secret is in its 24 h grace period the header holds two
  signatures separated by a space (new secret first); accept the delivery when any one matches, comparing in constant time.

The TypeScript SDK does all of this: \`verifyWebhook(rawBody, headers, secrets)\` returns the typed event or throws (pass the old and the new secret during a rotation). Any Standard Webhooks library works too.

Answer 2xx (within 10 s) once the event is stored; 410 Gone disables the endpoint; anything else, a timeout or a network error is retried
5 s, 5 min, 30 min, 2 h, 5 h, 10 h and 10 h later (±20 %, \`Retry-After\` honoured), then the delivery is marked failed. Redirects are not followed.

Deliveries to one host and port reuse kept-alive HTTP/1.1 connections (\`connection: keep-alive\`); a connection idle for 4 s is closed by us, and one you close is replaced (a request that finds it closed is sent again on a new connection).`;

/** The three request headers of every delivery. */
export function webhookHeaderParameters(): Json {
  const header = (name: string, description: string, schema: Json, example: string) => ({
    name,
    in: 'header',
    required: true,
    description,
    schema,
    example,
  });
  return {
    WebhookId: header(
      'webhook-id',
      'The event id, the same on every retry of this event (and the body `id`)',
      { type: 'string', pattern: '^evt_[0-9a-f]{32}$' },
      'evt_5f0c6a3e2b1d4c8e9a7f6b5c4d3e2f1a',
    ),
    WebhookTimestamp: header(
      'webhook-timestamp',
      'Unix seconds when this attempt was sent',
      { type: 'string', pattern: '^[0-9]+$' },
      '1795253400',
    ),
    WebhookSignature: header(
      'webhook-signature',
      'Space-separated `v1,<base64 HMAC-SHA256>` signatures of `<webhook-id>.<webhook-timestamp>.<body>`, one per valid secret',
      { type: 'string', pattern: '^v1,[A-Za-z0-9+/=]+( v1,[A-Za-z0-9+/=]+)*$' },
      'v1,K5oZfzN95Z9UVu1EsfQmfVNQhnkZ2pj9o9NDN/H/pI4=',
    ),
  };
}

/** The body of a delivery of one event type, as a TypeBox schema named `<Type>Event`. */
function envelope(type: EventType, description: string, payload: TSchema): TSchema {
  return Type.Object(
    {
      id: Type.String({
        pattern: '^evt_[0-9a-f]{32}$',
        description: 'The event id (also `webhook-id`)',
        examples: ['evt_5f0c6a3e2b1d4c8e9a7f6b5c4d3e2f1a'],
      }),
      type: Type.Literal(type),
      timestamp: Type.String({ format: 'date-time', description: 'When the change happened', examples: ['2026-11-20T09:30:00.000Z'] }),
      data: payload,
    },
    { title: eventSchemaName(type), description },
  );
}

/** The `webhooks` section: one POST per event type, in catalogue order. */
export function describeWebhooks(): Json {
  const webhooks: Json = {};
  for (const { type, description, payload } of eventCatalog) {
    webhooks[type] = {
      post: {
        operationId: `receive${eventSchemaName(type)}`,
        summary: `${type} delivered to your endpoint`,
        description: `${description}\n\nVerify the \`webhook-signature\` before trusting the body: see the *Webhook events* tag.`,
        tags: ['Webhook events'],
        security: [],
        parameters: ['WebhookId', 'WebhookTimestamp', 'WebhookSignature'].map((name) => ({ $ref: `#/components/parameters/${name}` })),
        requestBody: {
          required: true,
          content: { 'application/json': { schema: describeSchema(envelope(type, description, payload)) } },
        },
        responses: {
          '200': { description: 'Delivered (any 2xx answer counts; its body is ignored apart from an excerpt in the delivery log)' },
          '410': { description: 'Gone: the endpoint is disabled and gets no further deliveries' },
        },
      },
    };
  }
  return webhooks;
}

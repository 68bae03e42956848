import { VERIFY_DESCRIPTION } from './webhooks.ts';

/** What each tag of the document groups, in the order a reader meets them. */
const TAGS: Record<string, string> = {
  Contacts:
    'Companies and people you sell to. A contact is addressed by id, name, e-mail or CIF (`{identifier}`, tried in that order); it has a type (`GET /contacts/types`), one location, account users and free-form `extra_fields`. Batch create and batch upsert (matched on e-mail, CIF or name) take up to 100 contacts, all or nothing.',
  Opportunities:
    'Deals in progress with a contact (`enterprise_identifier`): amount, currency, status `open`, `won` or `lost`, probability and close date.',
  Orders:
    'Orders of a contact, addressed by their unique `reference` (generated when omitted). Product lines are priced from the catalog when written and keep that snapshot; every state change is kept in `states` and announced as `order.state_changed`.',
  Products:
    'The catalog: products addressed by their unique `reference`, each with a VAT percentage, a category and one or more price rates (unique `sku`s). Batch create and batch upsert (matched on reference or sku) take up to 100 products.',
  'Product categories':
    'A tree of product categories (`parent_id`); a category is answered with its whole subtree in `children`. A category that has products or children cannot be deleted (409).',
  Documents:
    'Files up to 20 MB (pdf, images, office documents, csv, txt; the content must match the extension) stored with their metadata, linked to at most one contact and attached to any number of opportunities.',
  Webhooks:
    'Endpoints that receive a signed POST for every change of your account (the `webhooks` section of this document lists each event and its body), their signing secrets, test events and the log of delivery attempts with manual retry.',
  Events:
    'The feed of your account’s events, oldest first, with the same `id`, `type`, `timestamp` and `data` as the webhook deliveries: a way to catch up after downtime without a webhook endpoint. Events are kept 30 days.',
  'Webhook events': `What your endpoint receives: one entry per event type, its body (the resource as the API returns it, or \`{ id, reference? }\` for a deletion) and the three Standard Webhooks headers to verify.\n\n${VERIFY_DESCRIPTION}`,
  Users: "Your account's users: the e-mails accepted as a contact's `users` and an opportunity's or order's `user_email`.",
  'Audit log': 'One record per request made with your key, refused ones included, newest first.',
  Health: 'Whether every service behind the gateway is ready.',
};

/** The document's `tags`: every tag an operation uses, with its description, known tags first in reading order. */
export function describeTags(used: string[]): { name: string; description: string }[] {
  const names = [...new Set(used)];
  const known = Object.keys(TAGS);
  const order = (name: string) => (known.includes(name) ? known.indexOf(name) : known.length);
  return names
    .sort((a, b) => order(a) - order(b) || a.localeCompare(b))
    .map((name) => ({ name, description: TAGS[name] ?? `Operations tagged ${name}.` }));
}

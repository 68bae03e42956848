/** Tables of the webhooks schema (feature tables are added by their migrations). */
export type WebhooksDatabase = {};

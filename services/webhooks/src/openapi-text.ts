// What the OpenAPI descriptions of the webhooks lists and endpoint writes say about cursors, the
// Link header and conditional requests (contract §22, §24), written once for every route that shares it.

/** Page and cursor modes and the Link header of the endpoint and delivery lists. */
export const LIST_DESCRIPTION =
  'Default order: id ascending; `-field` sorts descending. ' +
  'Page mode (`page`, `per_page`) counts: `total`, `current_page`, `last_page`. Cursor mode: send `pagination.next_cursor` as `cursor` ' +
  '(with the same sort and filters, never with `page`) to continue after the last item without counting — counts are null there; ' +
  'a keyset walk returns every item that existed for the whole walk exactly once, whatever is inserted or deleted meanwhile. ' +
  'A cursor made for another sort or other filters, or a malformed one, is 422 on `cursor`. ' +
  'The `Link` header (RFC 8288) has first/prev/next/last page URLs in page mode, and next (with the cursor) in cursor mode.';

/** The ETag of a webhook endpoint. */
export const READ_DESCRIPTION =
  'Answers with a strong `ETag` of the endpoint (it changes whenever the endpoint does, a secret rotation included); ' +
  'with `If-None-Match` equal to it → 304 without a body.';

/** If-Match on the writes of a webhook endpoint. */
export const WRITE_DESCRIPTION =
  'With `If-Match` (the `ETag` of `GET /webhooks/{id}`, of a PUT/PATCH answer or of the creation answer; or `*`): 412 `precondition_failed` when the endpoint changed since, and nothing changes; ' +
  'without it the write proceeds as before. A 412 is not stored under an Idempotency-Key, so the same key may be retried with a fresh ETag.';

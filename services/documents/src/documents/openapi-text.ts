// What the OpenAPI descriptions of documents' routes say about lists and conditional writes
// (contract §22, §24), written once for every route that shares it.

/** Paging, sorting, cursors and the Link header of every documents list. */
export const LIST_DESCRIPTION =
  'Sort (`sort`, `-field` for descending) on id, name, created_at, updated_at; default id ascending. ' +
  'Page mode (`page`, `per_page`) counts: `total`, `current_page`, `last_page`. Cursor mode: send `pagination.next_cursor` as `cursor` ' +
  '(with the same sort and filters, never with `page`) to continue after the last item without counting — counts are null there; ' +
  'a keyset walk returns every item that existed for the whole walk exactly once, whatever is inserted or deleted meanwhile. ' +
  'A cursor made for another sort or other filters, or a malformed one, is 422 on `cursor`. ' +
  'The `Link` header (RFC 8288) has first/prev/next/last page URLs in page mode, and next (with the cursor) in cursor mode.';

/** If-Match on the writes that change a document. */
export const WRITE_DESCRIPTION =
  'With `If-Match` (the `ETag` of `GET /documents/{id}`, or `*`): 412 `precondition_failed` when the document changed since, and nothing changes (no event); ' +
  'without it the write proceeds as before. A 412 is not stored under an Idempotency-Key, so the same key may be retried with a fresh ETag.';

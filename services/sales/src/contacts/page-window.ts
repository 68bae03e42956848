import type { PageRequest } from '@crm/db';

/** Which rows to read for a page, given the filtered total. */
export interface PageWindow {
  /** False when the page is past the end: no rows query at all. */
  any: boolean;
  offset: number;
  limit: number;
  /** Read in the opposite order (then reverse) because the page is nearer the end. */
  reversed: boolean;
}

/**
 * OFFSET costs a walk over every skipped index entry, so a page in the second half of the
 * list is read from the other end of the same index with the smaller offset, then reversed:
 * the last page costs what the first one does. Sorts always end with `id`, so the order is
 * total and reading backwards yields exactly the same rows.
 */
export function pageWindow(total: number, page: PageRequest): PageWindow {
  const { offset, perPage } = page;
  if (offset >= total) return { any: false, offset, limit: perPage, reversed: false };
  const limit = Math.min(perPage, total - offset);
  if (offset <= total / 2) return { any: true, offset, limit, reversed: false };
  return { any: true, offset: total - offset - limit, limit, reversed: true };
}

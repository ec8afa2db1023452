// The three pagination shapes of the spec, as plain types and arithmetic.

export interface OffsetPage {
  limit: number;
  offset: number;
}

/** `{total, items, limit, offset}`: the envelope of every limit+offset listing. */
export interface OffsetEnvelope<T> {
  total: number;
  items: T[];
  limit: number;
  offset: number;
}

export function offsetEnvelope<T>(items: T[], total: number, page: OffsetPage): OffsetEnvelope<T> {
  return { total, items, limit: page.limit, offset: page.offset };
}

/** page/size listings (1-based page). */
export interface SizedPage {
  page: number;
  size: number;
}

export function pageToOffset(p: SizedPage): OffsetPage {
  return { limit: p.size, offset: (p.page - 1) * p.size };
}

/** page/size with the count in the body: `{total, page, size, items}`. */
export interface PageBody<T> {
  total: number;
  page: number;
  size: number;
  items: T[];
}

export function pageBody<T>(items: T[], total: number, p: SizedPage): PageBody<T> {
  return { total, page: p.page, size: p.size, items };
}

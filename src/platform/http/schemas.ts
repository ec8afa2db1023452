// Shared schema pieces: the error body, timestamps, and the three pagination shapes.
import type { FastifyReply } from 'fastify';
import { Type, type TSchema } from 'typebox';
import type { SizedPage } from '../../core/paging.js';

export const ErrorBody = Type.Object(
  {
    detail: Type.String(),
    error: Type.Optional(
      Type.Object({
        code: Type.String(),
        message: Type.String(),
        details: Type.Record(Type.String(), Type.Unknown()),
      }),
    ),
  },
  { $id: 'Error', description: 'Every error: `detail` is always a string; match on `error.code`.' },
);

/** A timestamp out: handlers return Date objects, clients read RFC 3339 UTC with Z. */
export const Timestamp = (options: { description?: string } = {}) =>
  Type.Unsafe<Date | string>(Type.String({ format: 'date-time', ...options }));

/**
 * A date in a query string: validated (unparseable is 422), offsets honoured, and handed
 * to the handler as a Date in UTC (conventions.ts converts it before the handler runs).
 */
export const DateParam = (description?: string) =>
  Type.Unsafe<Date>(Type.String({ format: 'date-time', ...(description ? { description } : {}) }));

export const DEFAULT_LIMIT = 50;
export const MAX_LIMIT = 500;
/** Most ids one bulk call takes (the spec's limit for bulk operations). */
export const MAX_BULK_IDS = 500;

/** `limit` + `offset` query fields (every listing that takes limit also takes offset). */
export const OffsetQuery = {
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_LIMIT, default: DEFAULT_LIMIT })),
  offset: Type.Optional(Type.Integer({ minimum: 0, default: 0 })),
};

export const OffsetEnvelope = <T extends TSchema>(item: T) =>
  Type.Object({
    total: Type.Integer({ minimum: 0 }),
    items: Type.Array(item),
    limit: Type.Integer(),
    offset: Type.Integer(),
  });

/** `page` (1-based) + `size` query fields. */
export const PageQuery = {
  page: Type.Optional(Type.Integer({ minimum: 1, default: 1 })),
  size: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_LIMIT, default: DEFAULT_LIMIT })),
};

export const PageBodySchema = <T extends TSchema>(item: T) =>
  Type.Object({
    total: Type.Integer({ minimum: 0 }),
    page: Type.Integer(),
    size: Type.Integer(),
    items: Type.Array(item),
  });

/** Page headers of the organization list shape: X-Total-Count, X-Page, X-Size. */
export function setPageHeaders(reply: FastifyReply, total: number, page: SizedPage): void {
  reply.header('x-total-count', String(total));
  reply.header('x-page', String(page.page));
  reply.header('x-size', String(page.size));
}

export const PAGE_HEADERS = {
  'x-total-count': Type.String({ description: 'Total number of items' }),
  'x-page': Type.String(),
  'x-size': Type.String(),
};

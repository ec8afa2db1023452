// Vendor URLs: the configured base URL, and RFC 8288 Link headers, the pagination of Okta and
// GitHub (`<url>; rel="next", <url>; rel="self"`). A next link is followed with the integration's credentials, so it must stay on the configured
// vendor (same origin, under the base path): a link elsewhere is an invalid answer, not a redirect.
import { VendorError } from './sdk.js';

/** config[field] as an http(s) URL (fallback when unset), or VendorError('config'). */
export function configUrl(config: Readonly<Record<string, unknown>>, field: string, fallback?: string): URL {
  const raw = config[field] ?? fallback;
  if (typeof raw !== 'string' || raw === '')
    throw new VendorError('config', `config.${field} is required for collection`);
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new VendorError('config', `config.${field} is not a URL`);
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:')
    throw new VendorError('config', `config.${field} must be an http(s) URL`);
  return url;
}

/** A path under base (keeping base's own path, e.g. GitHub Enterprise Server's /api/v3). */
export function under(base: URL, path: string): URL {
  const prefix = base.pathname.replace(/\/+$/, '');
  return new URL(`${prefix}${path}`, base.origin);
}

/** The URL of the link whose rel names `rel`, or null. */
export function linkRel(header: string | undefined, rel: string): string | null {
  if (!header) return null;
  for (const part of header.split(/,(?=\s*<)/)) {
    const m = /^\s*<([^>]*)>(.*)$/.exec(part);
    if (!m) continue;
    const rels = /;\s*rel\s*=\s*(?:"([^"]*)"|([^\s;,]+))/i.exec(m[2]!);
    const names = (rels?.[1] ?? rels?.[2] ?? '').toLowerCase().split(/\s+/);
    if (names.includes(rel)) return m[1]!;
  }
  return null;
}

/** True when url is on base's origin and under its path. */
export function isUnder(url: URL, base: URL): boolean {
  const prefix = base.pathname.endsWith('/') ? base.pathname : `${base.pathname}/`;
  return (
    url.origin === base.origin && (prefix === '/' || url.pathname.startsWith(prefix) || url.pathname === base.pathname)
  );
}

/** The rel="next" link of an answer, resolved against the request URL; throws invalid_response when it leaves the vendor. */
export function nextLink(header: string | undefined, requestUrl: URL, base: URL): string | null {
  const raw = linkRel(header, 'next');
  if (raw === null) return null;
  let url: URL;
  try {
    url = new URL(raw, requestUrl);
  } catch {
    throw new VendorError('invalid_response', `${base.host}: the next link is not a URL`);
  }
  if (!isUnder(url, base))
    throw new VendorError(
      'invalid_response',
      `${base.host}: the next link points outside the configured base URL (${url.origin})`,
    );
  return url.href;
}

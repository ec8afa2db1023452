// Dates in: RFC 3339 / ISO 8601. An explicit offset is honoured and converted to UTC;
// a value without a zone is read as UTC (the spec's documented input shape). Anything
// else is unparseable and the caller answers 422 (never a silently dropped filter).

const ISO_RE = /^(\d{4})-(\d{2})-(\d{2})(?:[Tt ](\d{2}):(\d{2})(?::(\d{2})(\.\d{1,9})?)?(Z|z|[+-]\d{2}:?\d{2})?)?$/;

export function parseDate(value: string): Date | null {
  const m = ISO_RE.exec(value.trim());
  if (!m) return null;
  const [, y, mo, d, h = '00', mi = '00', s = '00', frac = '', zone] = m;
  const year = Number(y);
  const month = Number(mo);
  const day = Number(d);
  const hour = Number(h);
  const minute = Number(mi);
  const second = Number(s);
  if (month < 1 || month > 12 || day < 1 || hour > 23 || minute > 59 || second > 60) return null;
  const daysInMonth = new Date(Date.UTC(year, month, 0)).getUTCDate();
  if (day > daysInMonth) return null;
  const ms = frac ? Math.floor(Number(`0${frac}`) * 1000) : 0;
  let t = Date.UTC(year, month - 1, day, hour, minute, Math.min(second, 59), ms);
  if (zone && zone.toUpperCase() !== 'Z') {
    const sign = zone.startsWith('-') ? -1 : 1;
    const digits = zone.slice(1).replace(':', '');
    const oh = Number(digits.slice(0, 2));
    const om = Number(digits.slice(2, 4));
    if (oh > 23 || om > 59) return null;
    t -= sign * (oh * 60 + om) * 60_000;
  }
  const date = new Date(t);
  return Number.isNaN(date.getTime()) ? null : date;
}

/** RFC 3339 UTC with Z, the one shape every timestamp leaves in. */
export function formatDate(date: Date): string {
  return date.toISOString();
}

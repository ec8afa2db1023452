import { v7 as uuidv7 } from 'uuid';

/** Time-ordered UUID (RFC 9562 v7): sortable by creation, index-friendly. */
export function newId(): string {
  return uuidv7();
}

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function isUuid(value: string): boolean {
  return UUID_RE.test(value);
}

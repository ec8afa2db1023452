// Both cache adapters store JSON text, so a value reads back the same from either (a Date
// comes back as its ISO string, undefined properties vanish) and a caller mutating an object
// after set() never changes what is cached.

export class CacheValueError extends TypeError {
  constructor(key: string) {
    super(`The value for cache key "${key}" is not JSON-serialisable`);
    this.name = 'CacheValueError';
  }
}

export function encode(key: string, value: unknown): string {
  const text = JSON.stringify(value) as string | undefined;
  if (text === undefined) throw new CacheValueError(key);
  return text;
}

export function decode<T>(text: string): T {
  return JSON.parse(text) as T;
}

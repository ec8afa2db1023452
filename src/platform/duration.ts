// Durations given to the cache and lock adapters: both must agree on what is valid,
// because Redis refuses what the memory adapters would silently accept.

export class InvalidDurationError extends RangeError {
  constructor(field: string, value: unknown) {
    super(`${field} must be a positive number of milliseconds, got ${String(value)}`);
    this.name = 'InvalidDurationError';
  }
}

/** A positive whole number of ms (fractions round up, as PX takes integers). */
export function positiveMs(field: string, value: number): number {
  if (!Number.isFinite(value) || value <= 0) throw new InvalidDurationError(field, value);
  return Math.ceil(value);
}

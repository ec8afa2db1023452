// Typed errors of the queue adapters.

/** A caller passed options no adapter can honour: a programming error, not a runtime one. */
export class QueueOptionsError extends Error {
  readonly field: string;
  constructor(field: string, message: string) {
    super(`${field}: ${message}`);
    this.name = 'QueueOptionsError';
    this.field = field;
  }
}

/** The queue was used after close(). */
export class QueueClosedError extends Error {
  constructor() {
    super('The queue is closed');
    this.name = 'QueueClosedError';
  }
}

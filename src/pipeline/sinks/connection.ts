// One broker connection a sink opens on first use and shares between its sends (nats,
// rabbitmq): a failed open is forgotten so the next send tries again, a lost connection is
// forgotten when the client says so (`forget`), and close() closes the one that is open.

export interface SharedConnection<T> {
  /** The open connection, or one opening; a failure to open is mapped by `mapError`. */
  get(): Promise<T>;
  /** Closes the connection if one was opened (errors ignored); the next get() opens anew. */
  close(): Promise<void>;
}

export function sharedConnection<T>(
  open: (forget: () => void) => Promise<T>,
  mapError: (err: unknown) => Error,
  closeIt: (conn: T) => Promise<void>,
): SharedConnection<T> {
  let current: Promise<T> | undefined;
  const forget = () => {
    current = undefined;
  };
  return {
    get() {
      current ??= open(forget).catch((err: unknown) => {
        current = undefined;
        throw mapError(err);
      });
      return current;
    },
    async close() {
      const opened = current;
      current = undefined;
      const conn = await opened?.catch(() => undefined);
      if (conn) await closeIt(conn).catch(() => undefined);
    },
  };
}

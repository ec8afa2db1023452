// One protocol input in the inputs benchmark (bench/inputs.ts): how to set it up against a
// running Weir and how to deliver events through it. The harness measures the Weir
// process's CPU seconds from the first send until every event is processed, and compares
// each input with the plain HTTP push of the same events in the same run.
export interface InputBenchContext {
  /** Base URL of the running Weir (`weir all`, embedded). */
  baseUrl: string;
  /** Session cookie of the platform administrator. */
  cookie: string;
  organizationId: number;
  /** A fresh integration (platform "custom" unless the input needs its own) and its ingestion token. */
  integration: { id: number; token: string };
  /** Creates another integration when an input needs its own platform/config; returns its id. */
  createIntegration(body: Record<string, unknown>): Promise<number>;
}

export interface InputSender {
  /** The integration whose processed-event counter the harness waits on. */
  integrationId: number;
  /** Delivers these events (JSON objects) through the input, in requests/messages of `batch` events. */
  send(events: readonly Record<string, unknown>[], batch: number): Promise<void>;
  close(): Promise<void>;
}

export interface InputBench {
  name: string;
  setup(ctx: InputBenchContext): Promise<InputSender>;
}

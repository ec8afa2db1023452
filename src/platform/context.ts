// The ambient context of the work in progress (an HTTP request, a job): its correlation
// id reaches every log line written while it runs, whichever logger writes it.
import { AsyncLocalStorage } from 'node:async_hooks';

export interface WorkContext {
  correlationId: string;
}

export const workContext = new AsyncLocalStorage<WorkContext>();

export function currentCorrelationId(): string | undefined {
  return workContext.getStore()?.correlationId;
}

// Every destination type. Each sink lives in its own folder under pipeline/sinks/ and adds
// one line here.
import type { SinkType } from './types.js';

export const SINK_TYPES: readonly SinkType[] = [];

export function sinkType(type: string): SinkType | undefined {
  return SINK_TYPES.find((t) => t.type === type);
}

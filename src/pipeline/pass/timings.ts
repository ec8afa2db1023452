// When each stage of one pass ended, for the trace (pass/trace.ts): a handful of clock reads
// per batch, never per event. Plain data, so that it crosses back from a pass thread with the
// result; times are Unix epoch milliseconds (performance.timeOrigin + now(), which agree
// across threads).
import { performance } from 'node:perf_hooks';

export interface PassTimings {
  /** When the pass began. */
  start: number;
  /** Each stage in order with the time it ended; a stage began where the one before ended. */
  stages: [stage: string, end: number][];
}

export const epochMs = (): number => performance.timeOrigin + performance.now();

/** Timings that begin now, and the function that marks the end of a stage. */
export function startTimings(): { timings: PassTimings; lap: (stage: string) => void } {
  const timings: PassTimings = { start: epochMs(), stages: [] };
  return { timings, lap: (stage) => timings.stages.push([stage, epochMs()]) };
}

/** Marks the end of a stage after the pass returned (the outbox rows' encoding). */
export function lapAfter(timings: PassTimings, stage: string): void {
  timings.stages.push([stage, epochMs()]);
}

// Process and Node.js runtime instruments under the names Prometheus users know from the
// Prometheus client libraries' process collector (process_cpu_seconds_total,
// process_resident_memory_bytes, process_start_time_seconds, process_open_fds...) and from
// Node.js dashboards (nodejs_eventloop_lag_seconds, nodejs_heap_size_used_bytes...).
// Neither @opentelemetry/host-metrics nor @opentelemetry/instrumentation-runtime-node is a
// dependency, so they are read here from node:process and node:perf_hooks, at collection
// time only: nothing runs between scrapes but the event-loop delay histogram (a libuv timer
// of the runtime) and one unref'd timer that closes the event-loop window.
import { readdirSync, readFileSync } from 'node:fs';
import { monitorEventLoopDelay, performance, type EventLoopUtilization } from 'node:perf_hooks';
import { ValueType, type Meter } from '@opentelemetry/api';

/** The event-loop gauges describe the last complete window of this length. */
export const EVENT_LOOP_WINDOW_MS = 10_000;
const LOOP_RESOLUTION_MS = 10;

interface LoopWindow {
  meanS: number;
  p99S: number;
  maxS: number;
  utilization: number;
}

/** Starts the instruments on `meter`; the returned function stops the event-loop sampling. */
export function observeRuntime(meter: Meter, windowMs = EVENT_LOOP_WINDOW_MS): () => void {
  const startSeconds = performance.timeOrigin / 1000;
  const delay = monitorEventLoopDelay({ resolution: LOOP_RESOLUTION_MS });
  delay.enable();
  let elu: EventLoopUtilization = performance.eventLoopUtilization();
  // A fixed window, not "since the last collection": the OTLP reader and a Prometheus scrape
  // collect on their own schedules and must read the same figures. Until the first window
  // closes, the figures since the start.
  const measure = (): LoopWindow => {
    // The histogram is in nanoseconds; an empty one (no sample yet) reports NaN.
    const s = (ns: number) => (Number.isFinite(ns) ? ns / 1e9 : 0);
    return {
      meanS: s(delay.mean),
      p99S: s(delay.percentile(99)),
      maxS: s(delay.max),
      utilization: performance.eventLoopUtilization(performance.eventLoopUtilization(), elu).utilization,
    };
  };
  let window: LoopWindow | undefined;
  const timer = setInterval(() => {
    window = measure();
    elu = performance.eventLoopUtilization();
    delay.reset();
  }, windowMs);
  timer.unref();

  const counter = (name: string, description: string, unit: string) =>
    meter.createObservableCounter(name, { description, unit, valueType: ValueType.DOUBLE });
  const gauge = (name: string, description: string, unit: string, valueType = ValueType.DOUBLE) =>
    meter.createObservableGauge(name, { description, unit, valueType });

  const cpuTotal = counter('process_cpu_seconds_total', 'CPU time (user and system) of the process', 's');
  const cpuUser = counter('process_cpu_user_seconds_total', 'User CPU time of the process', 's');
  const cpuSystem = counter('process_cpu_system_seconds_total', 'System CPU time of the process', 's');
  const rss = gauge('process_resident_memory_bytes', 'Resident memory of the process', 'By', ValueType.INT);
  const start = gauge('process_start_time_seconds', 'Start time of the process (Unix seconds)', 's');
  const fds = gauge('process_open_fds', 'Open file descriptors (Linux)', '{fd}', ValueType.INT);
  const maxFds = gauge('process_max_fds', 'The limit of open file descriptors (Linux)', '{fd}', ValueType.INT);
  const heapUsed = gauge('nodejs_heap_size_used_bytes', 'V8 heap in use', 'By', ValueType.INT);
  const heapTotal = gauge('nodejs_heap_size_total_bytes', 'V8 heap reserved', 'By', ValueType.INT);
  const external = gauge('nodejs_external_memory_bytes', 'Memory of C++ objects bound to JavaScript', 'By');
  const lag = gauge('nodejs_eventloop_lag_seconds', 'Mean event-loop delay over the last window', 's');
  const lagP99 = gauge('nodejs_eventloop_lag_p99_seconds', '99th percentile event-loop delay (window)', 's');
  const lagMax = gauge('nodejs_eventloop_lag_max_seconds', 'Longest event-loop delay over the last window', 's');
  const utilization = gauge('nodejs_eventloop_utilization_ratio', 'Share of the last window the loop was busy', '1');
  const maxFdLimit = readMaxFds();

  meter.addBatchObservableCallback(
    (result) => {
      const cpu = process.cpuUsage();
      result.observe(cpuTotal, (cpu.user + cpu.system) / 1e6);
      result.observe(cpuUser, cpu.user / 1e6);
      result.observe(cpuSystem, cpu.system / 1e6);
      const memory = process.memoryUsage();
      result.observe(rss, memory.rss);
      result.observe(heapUsed, memory.heapUsed);
      result.observe(heapTotal, memory.heapTotal);
      result.observe(external, memory.external);
      result.observe(start, startSeconds);
      const open = openFds();
      if (open !== undefined) result.observe(fds, open);
      if (maxFdLimit !== undefined) result.observe(maxFds, maxFdLimit);
      const loop = window ?? measure();
      result.observe(lag, loop.meanS);
      result.observe(lagP99, loop.p99S);
      result.observe(lagMax, loop.maxS);
      result.observe(utilization, loop.utilization);
    },
    [
      cpuTotal,
      cpuUser,
      cpuSystem,
      rss,
      start,
      fds,
      maxFds,
      heapUsed,
      heapTotal,
      external,
      lag,
      lagP99,
      lagMax,
      utilization,
    ],
  );
  return () => {
    clearInterval(timer);
    delay.disable();
  };
}

/** Entries of /proc/self/fd (less the one the listing itself holds open); undefined off Linux. */
function openFds(): number | undefined {
  try {
    return readdirSync('/proc/self/fd').length - 1;
  } catch {
    return undefined;
  }
}

function readMaxFds(): number | undefined {
  try {
    const line = readFileSync('/proc/self/limits', 'utf8')
      .split('\n')
      .find((l) => l.startsWith('Max open files'));
    const soft = line ? Number(line.split(/\s{2,}/)[1]) : NaN;
    return Number.isFinite(soft) ? soft : undefined;
  } catch {
    return undefined;
  }
}

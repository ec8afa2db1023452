// The disk guard: new events are refused (503 with Retry-After) before the free space of the
// data directory's filesystem falls below a floor, so that what was already accepted can still
// be written through (queue, outbox, body log, event store) and delivered. Reads go on. The
// free space is read with statfs at most once per `refreshMs`. Events accepted and not yet
// normalized take their room only later: what they will write is counted as used already
// (`reserved`), so a sender far ahead of the workers is refused before the disk fills.
import { statfsSync } from 'node:fs';
import type { Meter } from '@opentelemetry/api';
import { AppError } from '../../core/errors.js';

export const DISK_RETRY_AFTER_S = 30;

export interface DiskState {
  path: string;
  /** Bytes an unprivileged process may still write (statfs f_bavail); null when it cannot be measured. */
  free_bytes: number | null;
  total_bytes: number | null;
  floor_bytes: number;
  /** What events already accepted will still write (those waiting for normalization × WEIR_DISK_BYTES_PER_EVENT): counted as used. */
  reserved_bytes: number;
  /** True while new events are refused: free − reserved under the floor. */
  refusing: boolean;
}

export interface DiskGuard {
  /** Throws 503 storage.disk_low while the free space is under the floor. */
  check(): void;
  /** That 503 while the free space is under the floor, else undefined. */
  refusal(): AppError | undefined;
  state(): DiskState;
}

export function createDiskGuard(options: {
  path: string;
  floorBytes: number;
  refreshMs?: number;
  statfs?: (path: string) => { bavail: number; blocks: number; bsize: number };
  /** Bytes that what was accepted will still write (events waiting for normalization): free space already spoken for. */
  reserved?: () => number;
}): DiskGuard {
  const statfs = options.statfs ?? ((p: string) => statfsSync(p));
  const refreshMs = options.refreshMs ?? 1_000;
  let readAt = -Infinity;
  let current: DiskState = {
    path: options.path,
    free_bytes: null,
    total_bytes: null,
    floor_bytes: options.floorBytes,
    reserved_bytes: 0,
    refusing: false,
  };

  function state(): DiskState {
    const now = Date.now();
    if (now - readAt < refreshMs) return current;
    readAt = now;
    try {
      const s = statfs(options.path);
      const free = s.bavail * s.bsize;
      const reserved = Math.max(0, options.reserved?.() ?? 0);
      current = {
        path: options.path,
        free_bytes: free,
        total_bytes: s.blocks * s.bsize,
        floor_bytes: options.floorBytes,
        reserved_bytes: reserved,
        refusing: options.floorBytes > 0 && free - reserved < options.floorBytes,
      };
    } catch {
      // The directory cannot be measured (removed, no permission): nothing to guard with.
      current = { ...current, free_bytes: null, total_bytes: null, refusing: false };
    }
    return current;
  }

  function refusal(): AppError | undefined {
    const s = state();
    if (!s.refusing) return undefined;
    return new AppError('storage.disk_low', {
      detail:
        `New events are refused: the data directory's disk has ${s.free_bytes} bytes free` +
        (s.reserved_bytes > 0 ? `, of which events already accepted will still take about ${s.reserved_bytes}` : '') +
        `, under the floor of ${s.floor_bytes} (WEIR_DISK_FLOOR_BYTES); what was accepted is kept and delivered. Free space or raise the disk, then resend in ${DISK_RETRY_AFTER_S} s`,
      details: {
        free_bytes: s.free_bytes,
        reserved_bytes: s.reserved_bytes,
        floor_bytes: s.floor_bytes,
        retry_after_seconds: DISK_RETRY_AFTER_S,
      },
      headers: { 'retry-after': String(DISK_RETRY_AFTER_S) },
    });
  }

  return {
    state,
    refusal,
    check() {
      const refused = refusal();
      if (refused) throw refused;
    },
  };
}

/** weir_disk_free_bytes and weir_disk_refusing_events (1 while new events are refused) for /metrics. */
export function observeDisk(meter: Meter, guard: DiskGuard): void {
  const free = meter.createObservableGauge('weir_disk_free_bytes', {
    description: "Free bytes of the data directory's filesystem (the disk guard's reading)",
    unit: 'By',
  });
  const refusing = meter.createObservableGauge('weir_disk_refusing_events', {
    description: 'The disk guard: 1 while new events are refused (free bytes under WEIR_DISK_FLOOR_BYTES), else 0',
  });
  free.addCallback((result) => {
    const s = guard.state();
    if (s.free_bytes !== null) result.observe(s.free_bytes);
  });
  refusing.addCallback((result) => result.observe(guard.state().refusing ? 1 : 0));
}

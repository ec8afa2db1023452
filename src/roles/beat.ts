// The single scheduler. Every beat process competes for one lease; the holder runs the
// periodic tasks, renewing the lease well before it expires. A standby retries until the
// holder releases (clean stop) or dies (the lease expires), then takes over.
import type { LockPort, Lease } from '../platform/lock/port.js';
import type { Logger } from '../platform/logger.js';
import type { BeatTask } from '../platform/queue/jobs.js';

export interface BeatOptions {
  lock: LockPort;
  logger: Logger;
  tasks: BeatTask[];
  ttlMs: number;
  tickMs?: number;
  now?: () => Date;
  /** Called on every change of leadership (tests and telemetry). */
  onLeadership?: (leading: boolean) => void;
}

export const BEAT_LOCK_KEY = 'beat:leader';

export interface Beat {
  readonly leading: boolean;
  stop(): Promise<void>;
}

export function startBeat(options: BeatOptions): Beat {
  const { lock, logger, tasks, ttlMs } = options;
  const now = options.now ?? (() => new Date());
  const tickMs = options.tickMs ?? Math.min(1000, Math.floor(ttlMs / 3));
  const nextRun = new Map<string, number>();
  let lease: Lease | null = null;
  let stopped = false;
  let running: Promise<void> = Promise.resolve();
  let lastRenew = 0;

  const setLeading = (value: Lease | null) => {
    const was = lease !== null;
    lease = value;
    if (was !== (value !== null)) {
      logger.info({ leading: value !== null }, value ? 'beat is leading' : 'beat is on standby');
      options.onLeadership?.(value !== null);
    }
  };

  async function holdLeadership(): Promise<boolean> {
    const t = Date.now();
    if (lease === null) {
      setLeading(await lock.acquire(BEAT_LOCK_KEY, ttlMs));
      lastRenew = t;
    } else if (t - lastRenew >= ttlMs / 3) {
      const kept = await lease.renew(ttlMs);
      lastRenew = t;
      if (!kept) {
        logger.warn('beat lost its lease');
        setLeading(null);
      }
    }
    return lease !== null;
  }

  async function runDueTasks(): Promise<void> {
    const t = now();
    for (const task of tasks) {
      const due = nextRun.get(task.name) ?? 0;
      if (t.getTime() < due) continue;
      nextRun.set(task.name, t.getTime() + task.everyMs);
      try {
        await task.run(t);
      } catch (err) {
        logger.error({ err, task: task.name }, 'beat task failed');
      }
    }
  }

  async function tick(): Promise<void> {
    try {
      if (await holdLeadership()) await runDueTasks();
    } catch (err) {
      // Lock backend unreachable: we cannot prove we lead, so we don't act.
      logger.warn({ err }, 'beat could not reach the lock backend');
      setLeading(null);
    }
  }

  const timer = setInterval(() => {
    if (stopped) return;
    running = running.then(tick);
  }, tickMs);
  running = running.then(tick);

  return {
    get leading() {
      return lease !== null;
    },
    async stop() {
      stopped = true;
      clearInterval(timer);
      await running;
      const held = lease;
      setLeading(null);
      await held?.release();
    },
  };
}

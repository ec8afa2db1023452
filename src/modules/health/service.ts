// Health probes: liveness says the process answers; readiness checks the dependencies a
// request needs (database and cache) and names the one that is down. Neither reports
// version or edition.

export interface Probe {
  name: string;
  check(): Promise<void>;
}

export type CheckState = 'ok' | 'down';

/** The data directory's disk as the disk guard sees it: under the floor, new events are refused (reads go on). */
export interface DiskReport {
  free_bytes: number | null;
  reserved_bytes: number;
  floor_bytes: number;
  refusing_events: boolean;
}

export interface Readiness {
  ready: boolean;
  checks: Record<string, CheckState>;
  down: string[];
  disk?: DiskReport;
}

export interface HealthDeps {
  probes: Probe[];
  timeoutMs?: number;
  disk?: () => DiskReport;
}

function withTimeout(p: Promise<void>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<void>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms`)), ms);
  });
  return Promise.race([p, timeout]).finally(() => clearTimeout(timer));
}

export function createHealthService(deps: HealthDeps) {
  const timeoutMs = deps.timeoutMs ?? 2000;
  return {
    async readiness(): Promise<Readiness> {
      const results = await Promise.all(
        deps.probes.map(async (probe) => {
          try {
            await withTimeout(probe.check(), timeoutMs);
            return [probe.name, 'ok'] as const;
          } catch {
            return [probe.name, 'down'] as const;
          }
        }),
      );
      const checks = Object.fromEntries(results) as Record<string, CheckState>;
      const down = results.filter(([, s]) => s === 'down').map(([n]) => n);
      return { ready: down.length === 0, checks, down, ...(deps.disk ? { disk: deps.disk() } : {}) };
    },
  };
}

export type HealthService = ReturnType<typeof createHealthService>;

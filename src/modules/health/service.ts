// Health probes: liveness says the process answers; readiness checks the dependencies a
// request needs (database and cache) and names the one that is down. Neither reports
// version or edition.

export interface Probe {
  name: string;
  check(): Promise<void>;
}

export type CheckState = 'ok' | 'down';

export interface Readiness {
  ready: boolean;
  checks: Record<string, CheckState>;
  down: string[];
}

export interface HealthDeps {
  probes: Probe[];
  timeoutMs?: number;
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
      return { ready: down.length === 0, checks, down };
    },
  };
}

export type HealthService = ReturnType<typeof createHealthService>;

// What a syslog integration's listeners may declare, checked when it is created or changed
// (modules/integrations ConfigCheck) so a mistake is a 422 rather than a listener in error:
// a port WEIR_SYSLOG_PORTS allows, once per port space in the integration, and not a port
// another active syslog integration already listens on (the receiver would give it to the
// lower id and report the other as an error: config.ts listenerSpecs).
import type { ConfigIssue } from '../integrations/platforms.js';
import { portRanges } from './config.js';

interface Declared {
  protocol: string;
  port: number;
}

function declared(config: Record<string, unknown> | null | undefined): Declared[] {
  const listeners = config?.listeners;
  return Array.isArray(listeners)
    ? listeners.filter((l): l is Declared => typeof l === 'object' && l !== null && typeof l.port === 'number')
    : [];
}

/** UDP and the stream protocols are separate port spaces; TCP, TLS and RELP share one. */
const space = (l: Declared) => (l.protocol === 'udp' ? 'udp' : 'tcp');

export function createPortCheck(deps: {
  /** WEIR_SYSLOG_PORTS as written. */
  ports: string;
  /** The active syslog integrations (of active organizations). */
  integrations: () => Promise<{ id: number; name: string; organization_id: number; config: unknown }[]>;
}) {
  const allowed = portRanges(deps.ports);
  const ranges = deps.ports
    .split(',')
    .map((p) => p.trim())
    .filter((p) => p !== '')
    .join(', ');

  return async function check(
    config: Record<string, unknown>,
    self: { integrationId?: number; organizationId: number; active: boolean },
  ): Promise<ConfigIssue[]> {
    const issues: ConfigIssue[] = [];
    const listeners = declared(config);
    const at = (i: number) => `body/config/listeners/${i}/port`;
    const seen = new Map<string, number>();
    listeners.forEach((l, i) => {
      if (!allowed(l.port)) {
        issues.push({
          location: at(i),
          message: `${l.port} is outside the ports syslog listeners may use (WEIR_SYSLOG_PORTS): ${ranges}`,
        });
      }
      const key = `${space(l)}:${l.port}`;
      const first = seen.get(key);
      if (first !== undefined)
        issues.push({
          location: at(i),
          message: `${l.port}/${space(l)} is already listeners/${first} of this integration`,
        });
      else seen.set(key, i);
    });
    if (!self.active || listeners.length === 0) return issues;
    for (const other of await deps.integrations()) {
      if (other.id === self.integrationId) continue;
      const theirs = new Set(declared(other.config as Record<string, unknown>).map((l) => `${space(l)}:${l.port}`));
      listeners.forEach((l, i) => {
        if (!theirs.has(`${space(l)}:${l.port}`)) return;
        // Another organization's integration is not named to this caller.
        const whose =
          other.organization_id === self.organizationId
            ? `integration "${other.name}" (${other.id})`
            : 'a syslog integration of another organization';
        issues.push({ location: at(i), message: `${l.port}/${space(l)} is already the listener of ${whose}` });
      });
    }
    return issues;
  };
}

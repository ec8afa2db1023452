// The sync: reconciles Weir's SSO users with the identity provider. With a SCIM endpoint, a
// user the provider no longer lists (or lists as inactive) is deactivated and the rules are
// applied to its SCIM groups; without one, the rules are applied again to the claims of each
// user's last login (deleted users cannot be seen then: the result says so). One run at a
// time (a partial unique index); it runs as a job on the queue and reports its progress.
import type { Actor } from '../../core/actor.js';
import type { Clock } from '../../core/clock.js';
import { AppError } from '../../core/errors.js';
import { afterCommit } from '../../platform/db/ambient.js';
import { newId } from '../../core/ids.js';
import type { AuditService } from '../audit/service.js';
import type { JobRegistration } from '../../platform/queue/jobs.js';
import { defineJobs, type JobQueue } from '../queues.js';
import type { IdentityConfigService, ResolvedConfig } from './config.js';
import type { GuardedFetch } from './outbound.js';
import { reason } from './outbound.js';
import { firstMatch, type Claims } from './rules.js';
import { scimUsers, type ScimUser } from './scim.js';
import type { IdentityStore, SsoUserRow, SyncRunRow } from './store.js';

export const IDENTITY_QUEUE = 'identity';
export const IDENTITY_SYNC_JOB = 'identity.sync';

export interface IdentityJobs {
  [IDENTITY_QUEUE]: { [IDENTITY_SYNC_JOB]: { runId: string } };
}
/** The operation id of the audit entries a run writes, one per user it changes. */
export const SYNC_AUDIT_OPERATION = 'identity.sync_run';
/** A run queued or running this long without finishing is taken as abandoned (its worker died). */
const ABANDONED_MS = 30 * 60_000;
const CLAIMS_NOTE =
  "No SCIM endpoint is configured: the rules were applied to the claims of each user's last login; users deleted at the identity provider cannot be detected this way";

export interface SyncResult {
  deactivated: number;
  changed: number;
  unchanged: number;
  errors: { user: string | null; message: string }[];
  note: string | null;
}

export function createSync(deps: {
  store: IdentityStore;
  config: IdentityConfigService;
  queue: JobQueue;
  clock: Clock;
  fetch: GuardedFetch;
  audit: AuditService;
  transaction: <T>(fn: () => Promise<T>) => Promise<T>;
  invalidateOwner: (owner: { kind: 'user'; id: number }) => Promise<void>;
  closeSessions: (userId: number) => Promise<unknown>;
}) {
  const { store, clock } = deps;

  const view = (r: SyncRunRow) => ({
    id: r.id,
    status: r.status,
    source: r.source,
    seen: r.seen,
    total: r.total,
    result: (r.result as SyncResult | null) ?? null,
    error: r.error,
    created_at: r.created_at,
    started_at: r.started_at,
    finished_at: r.finished_at,
  });

  async function record(runId: string, user: SsoUserRow, change: string, details: Record<string, unknown>) {
    await deps.audit.record({
      actor: undefined,
      operationId: SYNC_AUDIT_OPERATION,
      method: 'JOB',
      path: '/api/identity/config/sync',
      outcome: 'success',
      status: 200,
      correlationId: `job:${runId}`,
      target: {
        type: 'user',
        id: user.id,
        organizationId: user.organization_id,
        details: { run_id: runId, username: user.username, change, ...details },
      },
    });
  }

  /** Applies what the provider says of one user; answers what changed. */
  async function reconcile(
    runId: string,
    config: ResolvedConfig,
    user: SsoUserRow,
    known: { active: boolean; claims: Claims } | null,
  ): Promise<'deactivated' | 'changed' | 'unchanged'> {
    const match = known?.active ? firstMatch(config.rules, known.claims) : null;
    if (!match) {
      if (!user.is_active) return 'unchanged';
      const why = !known
        ? 'unknown to the identity provider'
        : !known.active
          ? 'inactive at the identity provider'
          : 'its claims match no rule';
      await deps.transaction(async () => {
        await store.updateUser(user.id, { is_active: false });
        await record(runId, user, 'deactivated', { reason: why });
      });
      await deps.invalidateOwner({ kind: 'user', id: user.id });
      await deps.closeSessions(user.id);
      return 'deactivated';
    }
    const { rule } = match;
    if (user.role === rule.role && user.organization_id === rule.organization_id) return 'unchanged';
    if (rule.organization_id !== null && (await store.organizations([rule.organization_id])).length === 0) {
      throw new Error(`rule ${match.index} names organization ${rule.organization_id}, which no longer exists`);
    }
    await deps.transaction(async () => {
      await store.updateUser(user.id, { role: rule.role, organization_id: rule.organization_id });
      await record(runId, user, 'changed', {
        from: { role: user.role, organization_id: user.organization_id },
        to: { role: rule.role, organization_id: rule.organization_id },
        rule: match.index,
      });
    });
    await deps.invalidateOwner({ kind: 'user', id: user.id });
    return 'changed';
  }

  function scimIndex(users: ScimUser[]) {
    const byKey = new Map<string, ScimUser>();
    for (const u of users) {
      byKey.set(`name:${u.userName.toLowerCase()}`, u);
      if (u.externalId) byKey.set(`ext:${u.externalId}`, u);
      for (const e of u.emails) byKey.set(`email:${e.toLowerCase()}`, u);
    }
    // The OIDC subject as SCIM externalId, else the user name, else an e-mail address.
    return (user: SsoUserRow) =>
      (user.sso_subject ? byKey.get(`ext:${user.sso_subject}`) : undefined) ??
      byKey.get(`name:${user.username.toLowerCase()}`) ??
      (user.email ? byKey.get(`email:${user.email.toLowerCase()}`) : undefined);
  }

  async function run(runId: string): Promise<void> {
    const runRow = await store.run(runId);
    // Not there yet: the request's transaction has not committed (BullMQ takes jobs at once); the retry finds it.
    if (!runRow) throw new Error(`sync run ${runId} not found`);
    if (runRow.status !== 'queued' && runRow.status !== 'running') return;
    await store.updateRun(runId, { status: 'running', started_at: clock.now() });
    const result: SyncResult = { deactivated: 0, changed: 0, unchanged: 0, errors: [], note: null };
    try {
      const config = await deps.config.resolved();
      if (!config) throw new Error('the identity configuration was removed');
      const users = await store.ssoUsers(config.issuer);
      let lookup: ((u: SsoUserRow) => ScimUser | undefined) | null = null;
      if (runRow.source === 'scim') {
        if (!config.scimBaseUrl || !config.scimToken)
          throw new Error('the SCIM endpoint was removed from the configuration');
        const listed: ScimUser[] = [];
        for await (const u of scimUsers(deps.fetch, config.scimBaseUrl, config.scimToken, () => undefined))
          listed.push(u);
        lookup = scimIndex(listed);
      } else result.note = CLAIMS_NOTE;
      await store.updateRun(runId, { total: users.length, seen: 0 });
      let seen = 0;
      for (const user of users) {
        try {
          let known: { active: boolean; claims: Claims } | null;
          const stored = (user.sso_claims ?? {}) as Claims;
          if (lookup) {
            const s = lookup(user);
            // SCIM speaks for the user's state and groups; the other claims stay those of the last login.
            known = s
              ? {
                  active: s.active,
                  claims: { ...stored, groups: s.groups, ...(s.emails[0] ? { email: s.emails[0] } : {}) },
                }
              : null;
          } else known = { active: true, claims: stored };
          result[await reconcile(runId, config, user, known)]++;
        } catch (err) {
          result.errors.push({ user: user.username, message: reason(err) });
        }
        seen++;
        if (seen % 20 === 0 || seen === users.length) await store.updateRun(runId, { seen });
      }
      await store.updateRun(runId, { status: 'succeeded', seen, result, finished_at: clock.now() });
    } catch (err) {
      await store.updateRun(runId, { status: 'failed', error: reason(err), result, finished_at: clock.now() });
    }
  }

  return {
    async start(actor: Actor) {
      const config = await deps.config.resolved();
      if (!config)
        throw new AppError('identity.not_configured', {
          detail: 'No identity provider is configured: PUT /api/identity/config first',
        });
      const active = await store.activeRun();
      if (active && clock.now().getTime() - active.created_at.getTime() > ABANDONED_MS) {
        await store.updateRun(active.id, {
          status: 'failed',
          error: 'abandoned: the run did not finish within 30 minutes',
          finished_at: clock.now(),
        });
      }
      const id = newId();
      const row = await store.insertRun({
        id,
        source: config.scimBaseUrl ? 'scim' : 'claims',
        requested_by: actor.kind === 'user' ? actor.id : null,
      });
      if (!row)
        throw new AppError('identity.sync_running', {
          detail: 'A sync is already queued or running: follow it with GET /api/identity/config/sync-status',
        });
      // The database queue's enqueue commits with the run row; BullMQ's is sent once the row has committed.
      const enqueue = () =>
        deps.queue
          .enqueue(
            IDENTITY_QUEUE,
            IDENTITY_SYNC_JOB,
            { runId: id },
            { jobId: `${IDENTITY_SYNC_JOB}-${id}`, attempts: 3 },
          )
          .then(() => undefined);
      if (deps.queue.backend === 'bullmq') await afterCommit(enqueue);
      else await enqueue();
      return { id, status: row.status };
    },

    async status() {
      const active = await store.activeRun();
      const last = await store.lastFinishedRun();
      return { running: Boolean(active), current: active ? view(active) : null, last: last ? view(last) : null };
    },

    run,

    jobs(): JobRegistration {
      return defineJobs({
        queue: IDENTITY_QUEUE,
        role: 'worker',
        concurrency: 1,
        handlers: { [IDENTITY_SYNC_JOB]: async (job) => run(job.payload.runId) },
      });
    },
  };
}

export type Sync = ReturnType<typeof createSync>;

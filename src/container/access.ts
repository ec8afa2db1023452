// Who may do what, and for whom: users, tokens, single sign-on, service accounts, licenses,
// organizations (with their case-management customers), the internal tenant endpoints and
// the housekeeping of sessions and processes.
import { wireAuth, wireIdentity } from '../modules/auth/index.js';
import { wireCaseManagement } from '../modules/case/index.js';
import { wireSso } from '../modules/identity/index.js';
import { wireInternal } from '../modules/internal/index.js';
import { wireLicenses } from '../modules/licenses/index.js';
import { wireMaintenance } from '../modules/maintenance/index.js';
import { wireOrganizations } from '../modules/organizations/index.js';
import { wireServiceAccounts } from '../modules/service-accounts/index.js';
import { wireTokens } from '../modules/tokens/index.js';
import type { Base } from './base.js';
import type { Intake } from './intake.js';

export type Access = ReturnType<typeof wireAccess>;

export function wireAccess(b: Base, intake: Intake) {
  const { config, db, clock, cache, queue, rateLimiter } = b;
  const identity = wireIdentity({
    db,
    cache,
    clock,
    rateLimiter,
    tokenHmacKey: b.keys.key('api-token-hmac'),
    tokenRateLimit: config.tokenRateLimit,
  });
  const lastUseFlush = setInterval(() => {
    void identity.tokens.flushLastUsed().catch(b.onError);
    void intake.ingest.service.flushLastUsed().catch(b.onError);
  }, 30_000);
  lastUseFlush.unref();
  const sso = wireSso({
    db,
    clock,
    queue,
    audit: intake.audit.service,
    identity,
    rateLimiter,
    cipher: b.cipher('credentials', 'identity'),
    net: b.net(),
  });
  const auth = wireAuth({ db, identity, rateLimiter, clock, sso: sso.policy });
  const apiTokens = wireTokens({ tokens: identity.tokens, users: identity.users });
  const serviceAccounts = wireServiceAccounts({ db, tokens: identity.tokens, clock });
  const licenses = wireLicenses({ db, cache, clock, trustTestLicenses: config.trustTestLicenses });
  const caseManagement = wireCaseManagement({ config: config.caseManagement, net: b.net(), cache, clock });
  const organizations = wireOrganizations({
    db,
    clock,
    queue,
    editions: licenses.editions,
    invalidateOwner: (owner) => identity.tokens.invalidateOwner(owner),
    caseCustomers: caseManagement.service,
  });
  const internal = wireInternal({
    tenants: organizations.service.tenants,
    authenticator: identity.authenticator,
    internalKey: config.internalKey,
  });
  const maintenance = wireMaintenance({ queue, processes: intake.processes.service, sessions: identity.sessions });
  return {
    identity,
    lastUseFlush,
    sso,
    auth,
    apiTokens,
    serviceAccounts,
    licenses,
    caseManagement,
    organizations,
    internal,
    maintenance,
  };
}

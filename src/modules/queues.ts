// The job map: every queue of Weir, its jobs and the payload of each. Each family declares
// its part beside its handlers (jobs.ts); enqueueing (JobQueue) and registering handlers
// (defineJobs) are checked against the whole, so a misspelt job or a payload of the wrong
// shape is a type error. Two families claiming one queue with different jobs do not compile.
import { jobRegistrations, type TypedQueue } from '../platform/queue/jobs.js';
import type { BackfillJobs } from './backfill/jobs.js';
import type { CollectJobs } from './collection/jobs.js';
import type { CaptureJobs } from './collector-config/jobs.js';
import type { DeliveryJobs } from './delivery/jobs.js';
import type { DetectionJobs } from './detections/jobs.js';
import type { EmailJobs } from './email/jobs.js';
import type { EnrichmentJobs } from './enrichment/jobs.js';
import type { IdentityJobs } from './identity/sync.js';
import type { MaintenanceJobs } from './maintenance/jobs.js';
import type { NormalizationJobs, NormalizeJobs } from './normalization/jobs.js';
import type { OrganizationJobs } from './organizations/jobs.js';
import type { SearchJobs } from './search/jobs.js';

export interface QueueJobs
  extends
    BackfillJobs,
    CaptureJobs,
    CollectJobs,
    DeliveryJobs,
    DetectionJobs,
    EmailJobs,
    EnrichmentJobs,
    IdentityJobs,
    MaintenanceJobs,
    NormalizationJobs,
    NormalizeJobs,
    OrganizationJobs,
    SearchJobs {}

/** The queue as modules use it. */
export type JobQueue = TypedQueue<QueueJobs>;

/** A family's handlers for one queue: every job of the map, each given its payload. */
export const defineJobs = jobRegistrations<QueueJobs>();

// CloudTrail live queries: LookupEvents takes ONE lookup attribute, an exact match
// (docs.aws.amazon.com, CloudTrail API Reference, LookupAttribute), beside StartTime and
// EndTime. Of the conditions ANDed at the top, the most selective attribute is sent; the rest
// and any OR stay local. Username is not offered: CloudTrail derives it per identity type, so
// it is not the value of any one field of the record.
import { NOTHING, conjuncts, isLeaf, nameOf, type LiveQuerySpec } from '../query.js';

const PRIORITY = ['EventId', 'AccessKeyId', 'EventName', 'EventSource'];

export const cloudtrailQuery: LiveQuerySpec = {
  // LookupEvents returns management events: never an Insights record (`insightDetails`, its own
  // event category) nor the EventBridge or lookup-events envelopes the mapping also reads.
  absent: ['insightDetails', 'detail', 'CloudTrailEvent'],
  or: false,
  parameter: 'LookupAttributes (one attribute, exact) with StartTime and EndTime',
  streams: {
    cloudtrail: [
      { path: 'eventID', name: 'EventId', ops: ['eq'] },
      { path: 'userIdentity.accessKeyId', name: 'AccessKeyId', ops: ['eq'] },
      { path: 'eventName', name: 'EventName', ops: ['eq'] },
      { path: 'eventSource', name: 'EventSource', ops: ['eq'] },
    ],
  },
  render(_stream, filter) {
    const leaves = conjuncts(filter)
      .filter(isLeaf)
      .filter((f) => f.op === 'eq');
    leaves.sort((a, b) => PRIORITY.indexOf(nameOf(a.field)) - PRIORITY.indexOf(nameOf(b.field)));
    const best = leaves[0];
    if (!best) return NOTHING;
    const key = nameOf(best.field);
    return {
      params: { LookupAttributes: JSON.stringify([{ AttributeKey: key, AttributeValue: best.value }]) },
      text: `${key}=${best.value}`,
    };
  },
};

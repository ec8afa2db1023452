// Names the detection screens share: OCSF severities, triage statuses, sources.
import { Badge } from '../../ui/kit';

export const SEVERITIES: [number, string][] = [
  [1, 'Informational'],
  [2, 'Low'],
  [3, 'Medium'],
  [4, 'High'],
  [5, 'Critical'],
  [6, 'Fatal'],
];
export const STATUSES = ['new', 'in_progress', 'resolved', 'false_positive', 'suppressed'] as const;
export type Status = (typeof STATUSES)[number];
export const SOURCES = ['rule', 'vendor', 'schedule'] as const;

export const severityName = (id: number) => SEVERITIES.find(([n]) => n === id)?.[1] ?? 'Unknown';
export const statusName = (s: string) => s.replace(/_/g, ' ');

export function SeverityBadge({ id }: { id: number }) {
  return <Badge value={severityName(id).toLowerCase()} />;
}

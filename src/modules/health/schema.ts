import { Type } from 'typebox';

export const Alive = Type.Object({ status: Type.Literal('ok') });

const Checks = Type.Record(Type.String(), Type.Union([Type.Literal('ok'), Type.Literal('down')]));

const Disk = Type.Object(
  {
    free_bytes: Type.Union([Type.Number(), Type.Null()], {
      description: "Free bytes of the data directory's filesystem; null when it cannot be measured",
    }),
    reserved_bytes: Type.Integer({
      description:
        'What events accepted and not yet normalized will still write (× WEIR_DISK_BYTES_PER_EVENT): counted as used',
    }),
    floor_bytes: Type.Integer({
      description:
        'WEIR_DISK_FLOOR_BYTES: when free − reserved falls under it, new events are refused with 503 (reads go on)',
    }),
    refusing_events: Type.Boolean(),
  },
  { description: 'The disk guard (platform/disk/guard.ts)' },
);

export const Ready = Type.Object({ status: Type.Literal('ok'), checks: Checks, disk: Type.Optional(Disk) });

export const NotReady = Type.Object({
  detail: Type.String(),
  error: Type.Object({
    code: Type.String(),
    message: Type.String(),
    details: Type.Object({ checks: Checks, down: Type.Array(Type.String()) }),
  }),
});

import { Type } from 'typebox';

export const Alive = Type.Object({ status: Type.Literal('ok') });

const Checks = Type.Record(Type.String(), Type.Union([Type.Literal('ok'), Type.Literal('down')]));

export const Ready = Type.Object({ status: Type.Literal('ok'), checks: Checks });

export const NotReady = Type.Object({
  detail: Type.String(),
  error: Type.Object({
    code: Type.String(),
    message: Type.String(),
    details: Type.Object({ checks: Checks, down: Type.Array(Type.String()) }),
  }),
});

// The top-level object of a mapped event, created so that V8 keeps it in fast mode.
//
// Why: setters add keys with computed names (`out[k] = v`), and V8 gives an object that
// grows through computed-key stores only max(12, its in-object slots) out-of-object
// properties before it turns it into a hash table ("dictionary mode"). A literal with the
// nine compiler-owned keys has nine slots, so events with more than ~20 top-level keys
// (CloudTrail, Falcon) became dictionaries: slower to fill, to validate (for-in copies the
// keys) and to serialize. Objects built by a constructor get as many in-object slots as
// the constructor's body has `this.x =` assignments (plus slack), counted by the parser
// whether they run or not; the branch below never runs and only reserves that room.
// The prototype is Object.prototype, so the result is a plain object like a literal.
import type { Obj } from './targets.js';

interface EventRootCtor {
  new (
    activityId: number,
    activityName: string,
    categoryUid: number,
    categoryName: string,
    classUid: number,
    className: string,
    typeUid: number,
    typeName: string,
    metadata: Obj,
  ): Obj;
}

const EventRoot = function (
  this: Record<string, unknown>,
  activityId: number,
  activityName: string,
  categoryUid: number,
  categoryName: string,
  classUid: number,
  className: string,
  typeUid: number,
  typeName: string,
  metadata: Obj,
) {
  this.activity_id = activityId;
  this.activity_name = activityName;
  this.category_uid = categoryUid;
  this.category_name = categoryName;
  this.class_uid = classUid;
  this.class_name = className;
  this.type_uid = typeUid;
  this.type_name = typeName;
  this.metadata = metadata;
  if ((metadata as unknown) === EventRoot) {
    // Never runs (see above): reserves in-object room for the keys the setters add.
    this.r0 = this.r1 = this.r2 = this.r3 = this.r4 = this.r5 = this.r6 = this.r7 = this.r8 = this.r9 = 0;
    this.s0 = this.s1 = this.s2 = this.s3 = this.s4 = this.s5 = this.s6 = this.s7 = this.s8 = this.s9 = 0;
    this.t0 = this.t1 = this.t2 = this.t3 = this.t4 = this.t5 = this.t6 = this.t7 = this.t8 = this.t9 = 0;
  }
} as unknown as EventRootCtor;
EventRoot.prototype = Object.prototype;

export function eventRoot(
  activityId: number,
  activityName: string,
  categoryUid: number,
  categoryName: string,
  classUid: number,
  className: string,
  typeUid: number,
  typeName: string,
  metadata: Obj,
): Obj {
  return new EventRoot(
    activityId,
    activityName,
    categoryUid,
    categoryName,
    classUid,
    className,
    typeUid,
    typeName,
    metadata,
  );
}

import assert from "node:assert/strict";
import { test } from "node:test";
import { validate, version } from "uuid";
import { isAcceptedUuid, isUuidV7, newId } from "../../runtime/uuid.ts";

test("newId makes RFC 9562 UUID v7s, checked by the uuid package, that sort in creation order", () => {
  const before = Date.now();
  const ids = Array.from({ length: 100_000 }, () => newId());
  const after = Date.now();
  assert.equal(new Set(ids).size, ids.length, "unique");
  for (let i = 0; i < ids.length; i++) {
    const id = ids[i]!;
    assert.ok(validate(id) && version(id) === 7, `${id} is a valid v7 for the uuid package`);
    assert.match(id, /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    if (i > 0) assert.ok(id > ids[i - 1]!, `ids sort in creation order (${ids[i - 1]} < ${id})`);
  }
  const ms = (id: string) => parseInt(id.replace(/-/g, "").slice(0, 12), 16);
  assert.ok(ms(ids[0]!) >= before && ms(ids[ids.length - 1]!) <= after + 2, "the first 48 bits are the time in ms");
});

test("ids keep sorting when the clock goes back", (t) => {
  const first = newId();
  t.mock.method(Date, "now", () => 1_000);
  const later = [newId(), newId()];
  t.mock.restoreAll();
  assert.ok(later[0]! > first && later[1]! > later[0]!);
});

test("accepted UUIDs: well-formed, not version 1, not nil; request ids: v7 only", () => {
  assert.ok(isAcceptedUuid(newId()));
  assert.ok(isAcceptedUuid("2f1c0b3e-8a4d-4c2b-9f6e-1a2b3c4d5e6f"), "v4");
  assert.ok(!isAcceptedUuid("c232ab00-9414-11ec-b3c8-9f6bdeced846"), "v1 is refused");
  assert.ok(!isAcceptedUuid("00000000-0000-0000-0000-000000000000"), "nil is refused");
  assert.ok(!isAcceptedUuid("not-a-uuid"));
  assert.ok(isUuidV7(newId()));
  assert.ok(!isUuidV7("2f1c0b3e-8a4d-4c2b-9f6e-1a2b3c4d5e6f"));
});

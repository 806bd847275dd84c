// A `postgres://` URL without a user name connects as libpq (psql) would: as the operating
// system's user when neither the URL nor PGUSER name one. `pg` alone takes $USER, and without it
// sends no user at all, which the server refuses ("no PostgreSQL user name specified in startup
// packet"): a service started by a process manager without $USER could not open its store.
import assert from "node:assert/strict";
import { userInfo } from "node:os";
import { test } from "node:test";
import { postgresUrl } from "../../generated/runtime/sql-driver.ts";

test("a postgres:// URL without a user takes the operating system's user, as psql does", () => {
  const saved = { USER: process.env.USER, PGUSER: process.env.PGUSER };
  try {
    delete process.env.USER;
    delete process.env.PGUSER;
    assert.equal(postgresUrl("postgres://127.0.0.1:5432/test?schema=a").username, userInfo().username);
    assert.equal(postgresUrl("postgres://127.0.0.1:5432/test?schema=a").searchParams.get("schema"), "a");
    assert.equal(
      postgresUrl("postgres://ann:secret@127.0.0.1:5432/test").username,
      "ann",
      "a user given is kept",
    );
    process.env.PGUSER = "bob";
    assert.equal(postgresUrl("postgres://127.0.0.1/test").username, "", "PGUSER is pg's to read");
    delete process.env.PGUSER;
    process.env.USER = "carol";
    assert.equal(postgresUrl("postgres://127.0.0.1/test").username, "", "$USER is pg's to read");
  } finally {
    for (const [name, value] of Object.entries(saved)) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
  }
});

// A service (or anything else with `close()`) opened once for the tests of a file or of a
// `describe`, and closed after them.
import { after, before } from "node:test";

/**
 * Registers a `before` hook that opens the fixture and then runs `prepare` with it (records the
 * tests share), and an `after` hook that closes it (if it opened). Returns the object the tests
 * use: empty until the `before` hook has run, then holding the opened fixture's fields. `open`
 * must give a plain object (its own fields are copied), such as `startApp`'s `Api` or
 * `startShowcase`'s `Service`.
 *
 * Setup that needs the fixture goes in `prepare`, not in a `before` hook of its own: at the top
 * level of a file, node:test does not wait for one `before` hook before starting the next.
 */
export function suiteFixture<T extends { close(): Promise<void> }>(open: () => Promise<T>, prepare?: (fixture: T) => Promise<void>): T {
  const fixture = {} as T;
  let opened = false;
  before(async () => {
    Object.assign(fixture, await open());
    opened = true;
    await prepare?.(fixture);
  });
  after(async () => {
    if (opened) await fixture.close();
  });
  return fixture;
}

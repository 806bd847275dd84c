import type { RuleId } from "../diagnostics/catalog.ts";
import { defineUnit, Engine } from "../engine.ts";
import { irregularPlurals } from "../util/names.ts";
import { isCompoundNoun, isParticlePlural, isVerbWord, lexiconVersion, SPEC_VERBS, verbOfLastWord } from "./lexicon.ts";

/**
 * The path rules of SPEC §2.3 for one name that becomes a path segment: a collection, a
 * parent, a `references` target or an action. Shared by the linter and by `canon new`, which
 * refuses a name that breaks them.
 */
export interface NameProblem {
  rule: RuleId;
  message: string;
  fix: string;
}

/**
 * The fixes of path-no-verb. Which words are verbs is the lexicon's to say (lexicon.ts); these
 * tables only choose the suggestion for a verb it found. What the method already says, for
 * verbs that name a plain operation:
 */
const methodFor: Record<string, string> = {
  get: "GET",
  fetch: "GET",
  find: "GET",
  list: "GET",
  query: "GET",
  lookup: "GET",
  retrieve: "GET",
  show: "GET",
  view: "GET",
  search: "GET with ?q=",
  count: "GET (offset pagination reports the total)",
  create: "POST",
  add: "POST",
  post: "POST",
  insert: "POST",
  make: "POST",
  submit: "POST",
  do: "POST",
  update: "PATCH",
  patch: "PATCH",
  edit: "PATCH",
  modify: "PATCH",
  change: "PATCH",
  set: "PATCH",
  save: "PATCH",
  upsert: "PUT",
  put: "PUT",
  replace: "PUT",
  delete: "DELETE",
  remove: "DELETE",
};

/** Nouns for verbs that are better modelled as an action record (POST /vN/<collection>/{id}/<noun>). */
const nounFor: Record<string, string> = {
  cancel: "cancellations",
  approve: "approvals",
  reject: "rejections",
  activate: "activations",
  deactivate: "deactivations",
  enable: "enablements",
  disable: "disablements",
  start: "starts",
  stop: "stops",
  refund: "refunds",
  archive: "archives",
  restore: "restorations",
  renew: "renewals",
  register: "registrations",
  login: "sessions",
  logout: "sessions",
  reset: "resets",
  verify: "verifications",
  validate: "validations",
  check: "checks",
  send: "deliveries",
  calculate: "calculations",
  compute: "calculations",
  trigger: "triggers",
  invoke: "invocations",
  call: "calls",
  run: "runs",
  execute: "executions",
  exec: "executions",
  perform: "executions",
  process: "processings",
};

/**
 * More verbs that name an action, with the plural noun of the record the action creates:
 * `complete` reads as `completions`, not `completes`. Each noun here is one the lexicon reads
 * as a noun (test/lint.test.ts checks it).
 */
const actionNouns: Record<string, string> = {
  complete: "completions",
  confirm: "confirmations",
  publish: "publications",
  unpublish: "unpublications",
  ship: "shipments",
  pay: "payments",
  assign: "assignments",
  close: "closures",
  accept: "acceptances",
  decline: "declines",
  subscribe: "subscriptions",
  unsubscribe: "unsubscriptions",
  invite: "invitations",
  redeem: "redemptions",
  deliver: "deliveries",
  fulfill: "fulfillments",
  fulfil: "fulfilments",
  suspend: "suspensions",
  resume: "resumptions",
  expire: "expirations",
  authorize: "authorizations",
  authenticate: "authentications",
  notify: "notifications",
  reserve: "reservations",
  book: "bookings",
  promote: "promotions",
  demote: "demotions",
  escalate: "escalations",
  resolve: "resolutions",
  reopen: "reopenings",
  sign: "signatures",
  rate: "ratings",
  open: "openings",
  transfer: "transfers",
  dispute: "disputes",
  withdraw: "withdrawals",
  deposit: "deposits",
  acknowledge: "acknowledgements",
  dismiss: "dismissals",
  revoke: "revocations",
  renew: "renewals",
  extend: "extensions",
  grant: "grants",
  apply: "applications",
  enroll: "enrollments",
  join: "memberships",
  leave: "departures",
  upgrade: "upgrades",
  downgrade: "downgrades",
  duplicate: "duplicates",
  copy: "copies",
  move: "moves",
  rename: "renamings",
  lock: "locks",
  unlock: "unlockings",
  block: "blocks",
  unblock: "unblockings",
  mark: "marks",
  pause: "pauses",
  follow: "followings",
  unfollow: "unfollows",
  like: "reactions",
  vote: "votes",
  review: "reviews",
  reply: "replies",
  return: "returns",
  exchange: "exchanges",
  schedule: "schedules",
  reschedule: "reschedulings",
};

/** Every noun path-no-verb may suggest for an action (for the test that each passes the path rules). */
export function suggestedActionNouns(): string[] {
  return [...new Set([...Object.values(nounFor), ...Object.values(actionNouns)])].sort();
}

/** The plural noun to suggest for the last word of a name: an action's record, or the word's plural. */
export function pluralNounFor(word: string): string {
  const noun = actionNouns[word];
  return noun ?? pluralWord(word);
}

const irregularPluralOf: Record<string, string> = {
  person: "people",
  child: "children",
  datum: "data",
  medium: "media",
  criterion: "criteria",
  setting: "settings",
};

const segmentPattern = /^[a-z]+(-[a-z]+)*$/;

/** Plural of one lowercase word, for suggestions. */
export function pluralWord(word: string): string {
  const irregular = irregularPluralOf[word];
  if (irregular) return irregular;
  if (/[^aeiou]y$/.test(word)) return `${word.slice(0, -1)}ies`;
  if (/(s|x|z|ch|sh)$/.test(word)) return `${word}es`;
  return `${word}s`;
}

/** Is this one lowercase word a plural noun by the rule of SPEC §2.3? */
export function isPluralWord(word: string): boolean {
  return irregularPlurals.has(word) || (word.endsWith("s") && !word.endsWith("ss"));
}

/** The closest well-formed spelling: lowercase, words joined by single hyphens. */
export function tidySegment(segment: string): string {
  return segment
    .replace(/([a-z0-9])([A-Z])/g, "$1-$2")
    .toLowerCase()
    .replace(/[^a-z]+/g, "-")
    .replace(/^-+|-+$/g, "");
}

/**
 * `checkCollectionName` as a unit of the engine (engine.ts): its answer depends on the name, the
 * kind and the lexicon alone, so a cold run after a change recalls the answer for every
 * unchanged name from the records, and reads none of WordNet's index files (5 MB) for them.
 */
const nameProblems = defineUnit<{ name: string; kind: NameKind; lexicon: string }, NameProblem[]>(
  "lint/name problems",
  ({ name, kind }) => checkCollectionName(name, kind),
);

/** `checkCollectionName` in the current run's engine, if any (the linter's path rules). */
export function collectionNameProblems(name: string, kind: NameKind): NameProblem[] {
  const engine = Engine.current();
  return engine
    ? engine.run(nameProblems, { name, kind, lexicon: lexiconVersion() }, undefined)
    : checkCollectionName(name, kind);
}

type NameKind = "collection" | "action";

/** Every path-rule problem of a collection or action name; empty when the name is fine. */
export function checkCollectionName(name: string, kind: NameKind = "collection"): NameProblem[] {
  const problems: NameProblem[] = [];
  const what = kind === "action" ? "action" : "collection";
  if (typeof name !== "string" || name.length === 0) {
    return [
      {
        rule: "path-lowercase",
        message: `the ${what} name is empty`,
        fix: "name it with a plural noun, such as `orders`",
      },
    ];
  }
  const segments = name.split("/");
  if (segments.length > 1) {
    const last = tidySegment(segments[segments.length - 1]!) || "items";
    problems.push({
      rule: "path-nesting",
      message: `${what} name ${JSON.stringify(name)} spans ${segments.length} path segments; a name is one segment`,
      fix:
        kind === "action"
          ? `name the action with one plural noun, such as ${JSON.stringify(last)}`
          : `name it ${JSON.stringify(last)} and nest it with \`parent: ${tidySegment(segments[0]!) || "<collection>"}\` (canon nests at most 2 levels)`,
    });
  }
  for (const segment of segments) problems.push(...checkSegment(segment, what));
  return problems;
}

/**
 * The verb a word of a path segment of `count` words is (as WordNet lists it), or null: in a
 * compound noun only a verb SPEC §2.3 names; the last word as a third person (`closes`), unless it
 * is a phrasal noun's particle (`sign-ups`); any other word in its base form (`close-tickets`).
 */
function verbIn(word: string, last: boolean, count: number, compound: boolean): string | null {
  if (compound) return SPEC_VERBS.has(word) ? word : null;
  if (last) return count > 1 && isParticlePlural(word) ? null : verbOfLastWord(word);
  return isVerbWord(word) ? word : null;
}

function checkSegment(segment: string, what: string): NameProblem[] {
  const problems: NameProblem[] = [];
  const tidy = tidySegment(segment);
  const quoted = JSON.stringify(segment);
  if (!segmentPattern.test(segment)) {
    problems.push({
      rule: "path-lowercase",
      message: `${what} name ${quoted} ${describeCase(segment)}; use lowercase letters, words joined by single hyphens`,
      fix: tidy ? `rename it ${JSON.stringify(tidy)}` : "rename it with lowercase letters, such as `orders`",
    });
  }
  const words = tidy.split("-").filter(Boolean);
  if (words.length === 0) return problems;
  // Which words are verbs, by the English lexicon (lexicon.ts): the last word may be a verb's
  // third person (`closes`), the others its base form (`close-tickets`).
  const verbs = new Map<string, string>();
  // A compound noun WordNet lists (`no-shows`, `follow-ups`) is a noun, whatever its words but
  // those SPEC §2.3 names (`check-ins` is refused: "check" is one); so is a phrasal noun's
  // particle (`sign-ups`).
  const compound = words.length > 1 && isCompoundNoun(tidy);
  words.forEach((word, i) => {
    const verb = verbIn(word, i === words.length - 1, words.length, compound);
    if (verb !== null && !verbs.has(word)) verbs.set(word, verb);
  });
  for (const [word, verb] of verbs) {
    const reading = word === verb ? "" : ` (${verb})`;
    problems.push({
      rule: "path-no-verb",
      message: `${what} name ${quoted} contains the verb "${word}"${reading}; no verb may appear in a path`,
      fix: compound
        ? `${quoted} is a noun, but SPEC §2.3 refuses the word "${word}" wherever it stands: write it as one word, ${JSON.stringify(words.join(""))}, or use another noun`
        : verbFix(
            verb,
            words.filter((w) => !verbs.has(w)),
          ),
    });
  }
  const last = words[words.length - 1]!;
  if (!verbs.has(last) && !isPluralWord(last)) {
    const plural = [...words.slice(0, -1), pluralNounFor(last)].join("-");
    problems.push({
      rule: "path-plural",
      message: `${what} name ${quoted} is not plural: its last word "${last}" ${last.endsWith("ss") ? "ends in ss" : "does not end in s"}`,
      fix: `use the plural noun ${JSON.stringify(plural)}`,
    });
  }
  return problems;
}

function describeCase(segment: string): string {
  if (/[A-Z]/.test(segment)) return "has uppercase letters";
  if (segment.includes("_")) return "has underscores";
  if (/--/.test(segment)) return "has a double hyphen";
  if (/^-|-$/.test(segment)) return "starts or ends with a hyphen";
  if (/\d/.test(segment)) return "has digits";
  return "has characters other than lowercase letters and hyphens";
}

/** How to name it without the verb; `rest` are the name's words that are no verbs. */
function verbFix(verb: string, rest: string[]): string {
  const restName = rest.length ? rest.join("-") : undefined;
  const restPlural =
    restName && isPluralWord(rest[rest.length - 1]!)
      ? restName
      : rest.length
        ? [...rest.slice(0, -1), pluralWord(rest[rest.length - 1]!)].join("-")
        : undefined;
  const noun = nounFor[verb] ?? actionNouns[verb];
  if (noun) {
    return `model it as a record that is created: an action named ${JSON.stringify(noun)} (POST /vN/<collection>/{id}/${noun})${restPlural ? `, or the collection ${JSON.stringify(restPlural)}` : ""}`;
  }
  const method = methodFor[verb];
  if (!method && rest.length === 0 && verbOfLastWord(pluralWord(verb)) === null)
    return `use the plural noun ${JSON.stringify(pluralWord(verb))}`;
  if (!method) {
    return restPlural
      ? `name the collection ${JSON.stringify(restPlural)} (the method says what is done to it), or model "${verb}" as a record that is created: an action named with a plural noun`
      : `name it after the thing it creates or reads, with a plural noun: the HTTP method says what is done`;
  }
  return restPlural
    ? `name the collection ${JSON.stringify(restPlural)}: ${method} on it already says "${verb}"`
    : `drop "${verb}": ${method} already says it; name the thing with a plural noun`;
}

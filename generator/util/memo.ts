/**
 * A pure function of one text, remembered by that text: a process that generates again and again
 * (`canon dev`) computes it once per distinct input. Holds the results of about the last
 * `2 × limit` distinct inputs (two generations: the older one is dropped when the newer fills),
 * so memory stays bounded. Only for functions whose result is a function of the text alone and
 * is never modified by its callers.
 */
export function memoByText<T>(compute: (text: string) => T, limit = 4096): (text: string) => T {
  let current = new Map<string, T>();
  let previous = new Map<string, T>();
  return (text) => {
    let result = current.get(text);
    if (result !== undefined) return result;
    result = previous.get(text) ?? compute(text);
    if (current.size >= limit) {
      previous = current;
      current = new Map();
    }
    current.set(text, result);
    return result;
  };
}

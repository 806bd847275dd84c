/**
 * Results remembered by a text key, for a process that generates again and again (`canon dev`):
 * each is computed once per distinct key. Holds the results of about the last `2 × limit`
 * distinct keys (two generations: the older one is dropped when the newer fills), so memory
 * stays bounded. Only for results that are a function of the key alone and that no caller
 * modifies.
 */
export class TextMemo<T> {
  private current = new Map<string, T>();
  private previous = new Map<string, T>();
  private readonly limit: number;
  constructor(limit = 4096) {
    this.limit = limit;
  }

  /** How many results are remembered (of the last two generations). */
  get size(): number {
    return this.current.size + this.previous.size;
  }

  /** The result for `key`, when it is remembered. */
  peek(key: string): T | undefined {
    const result = this.current.get(key) ?? this.previous.get(key);
    if (result !== undefined && !this.current.has(key)) this.keep(key, result);
    return result;
  }

  get(key: string, compute: () => T): T {
    let result = this.current.get(key);
    if (result !== undefined) return result;
    result = this.previous.get(key) ?? compute();
    this.keep(key, result);
    return result;
  }

  private keep(key: string, result: T): void {
    if (this.current.size >= this.limit) {
      this.previous = this.current;
      this.current = new Map();
    }
    this.current.set(key, result);
  }
}

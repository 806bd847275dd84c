/** `/v1/orders/{id}` → `/orders/{}`: the same operation in two versions has the same key. */
export function pathKey(path: string): string {
  return path.replace(/^\/v[0-9]+(?=\/|$)/, "").replace(/\{[^}]*\}/g, "{}");
}

/** `/v1/orders/{id}` → `/orders/{}`: the same operation in two versions has the same key. */
export function pathKey(path: string): string {
  return path.replace(/^\/v[0-9]+(?=\/|$)/, "").replace(/\{[^}]*\}/g, "{}");
}

/** A filter parameter's operator suffix (`[in]`, `[gte]`, `[null]`), at the end of its name. */
const OPERATOR = /\[[a-z]+\]$/;

/** `status[in]` → `status`: the field a filter parameter (a list's, or an export's filter) names. */
export function filterFieldOf(name: string): string {
  return name.replace(OPERATOR, "");
}

/** `[in]` of `status[in]`; "" for a filter of equality. */
export function operatorOf(name: string): string {
  return OPERATOR.exec(name)?.[0] ?? "";
}

/** Page sizes of every list (conventions §8): 20 records when the query does not say, never more than 100. */
export const DEFAULT_PAGE_SIZE = 20;
export const MAX_PAGE_SIZE = 100;

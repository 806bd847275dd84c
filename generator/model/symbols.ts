/**
 * Names that cross generated files, computed once. A generated file that defines a name and every
 * file that imports it read the same field here, so renaming one (a validator, a mapper, a service)
 * is a change in one place, and a child collection, an action or a version reuses it as it is.
 */
import { camelCase, pascalCase } from "../util/names.ts";
import type { Names } from "./names.ts";

/** The names of one kind of record (a resource's, or an action's) across the generated files. */
export interface RecordSymbols {
  /** `vN/<collection>/types.ts`: the record as a version shows it, `Order`. */
  type: string;
  /** `vN/<collection>/types.ts`: the body of a create, `OrderCreate`. */
  createBody: string;
  /** `values.ts`: what the store keeps, `OrderValues`. */
  values: string;
  /** `vN/<collection>/routes.ts`: the mapper from a stored record to `type`, `toOrder`. */
  view: string;
  /** `services.ts`: the key of its service in `Services`, `orders`. */
  service: string;
  /** `vN/<collection>/validators.ts`: the zod schema of a create body, `orderCreate`. */
  createSchema: string;
}

export interface ResourceSymbols extends RecordSymbols {
  /**
   * `vN/<collection>/types.ts` from the version's folder, `orders/types.ts`: the module of `type`
   * and the bodies, which `pagination.ts`, `client.ts` and the collection's `routes.ts` import.
   */
  typesModule: string;
  /** `types.ts`: `OrderUpdate` (PATCH body) and `OrderReplace` (PUT body). */
  updateBody: string;
  replaceBody: string;
  /** `validators.ts`: `orderIdParams`, `orderListQuery`, `orderUpdate`, `orderReplace`, `orderReadOnly`. */
  idParams: string;
  listQuery: string;
  updateSchema: string;
  replaceSchema: string;
  readOnly: string;
  /** `vN/<collection>/routes.ts`: registers the resource's routes, `registerOrdersRoutes`. */
  register: string;
  /** `vN/pagination.ts`: the page type of its list, `OrdersPage`. */
  page: string;
  /**
   * `vN/client.ts` and `vN/openapi.json`: the body of `POST /vN/exports` that exports its records,
   * `OrderExportCreate`, and the `filters` in it, `OrderExportFilters`.
   */
  exportCreate: string;
  exportFilters: string;
}

function recordSymbols(names: Pick<Names, "pascal" | "camel">, service: string): RecordSymbols {
  return {
    type: names.pascal,
    createBody: `${names.pascal}Create`,
    values: `${names.pascal}Values`,
    view: `to${names.pascal}`,
    service,
    createSchema: `${names.camel}Create`,
  };
}

/** The symbols of a resource from its names and its collection (the folder of its files). */
export function resourceSymbols(names: Names, collection: string): ResourceSymbols {
  return {
    ...recordSymbols(names, names.pluralCamel),
    typesModule: `${collection}/types.ts`,
    updateBody: `${names.pascal}Update`,
    replaceBody: `${names.pascal}Replace`,
    idParams: `${names.camel}IdParams`,
    listQuery: `${names.camel}ListQuery`,
    updateSchema: `${names.camel}Update`,
    replaceSchema: `${names.camel}Replace`,
    readOnly: `${names.camel}ReadOnly`,
    register: `register${names.pluralPascal}Routes`,
    page: `${names.pluralPascal}Page`,
    exportCreate: `${names.pascal}ExportCreate`,
    exportFilters: `${names.pascal}ExportFilters`,
  };
}

/**
 * The symbols of an action's records: named after the resource and the action's singular
 * (`OrderCancellation`, `orderCancellationCreate`), served by the service named after the resource
 * and the action (`orderCancellations`).
 */
export function actionSymbols(resourceSingular: string, actionSingular: string, actionName: string): RecordSymbols {
  const joined = `${resourceSingular}-${actionSingular}`;
  return recordSymbols({ pascal: pascalCase(joined), camel: camelCase(joined) }, camelCase(`${resourceSingular}-${actionName}`));
}

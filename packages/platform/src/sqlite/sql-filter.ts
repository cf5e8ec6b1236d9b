import { isOperatorObject, type JsonObject } from './json-documents.ts';

/** How one collection is laid out in SQLite, as far as filters and sorts need to know. */
export interface TableShape {
  /** The table's quoted name. */
  q: string;
  /** Indexed scalar paths, each kept in its own column (quoted name) so B-tree indexes serve them. */
  columns: ReadonlyMap<string, string>;
  /** Top-level fields holding arrays. */
  arrays: ReadonlySet<string>;
  /** Multikey index tables (quoted name) of array fields: one row per element and document. */
  multikey: ReadonlyMap<string, string>;
}

export const quoteIdent = (name: string): string => `"${name.replaceAll('"', '""')}"`;

const SAFE_SEGMENT = /^[A-Za-z0-9_-]+$/;

/** The JSON path SQLite's json functions take, for a dotted path of safe segments. */
export function jsonPath(path: string): string {
  return (
    '$' +
    path
      .split('.')
      .map((segment) => {
        if (!SAFE_SEGMENT.test(segment)) throw new Error(`field path "${path}" has a segment SQLite paths cannot name: use letters, digits, _ and -`);
        return /^[A-Za-z_][A-Za-z0-9_]*$/.test(segment) ? `.${segment}` : `."${segment}"`;
      })
      .join('')
  );
}

/** A JS value as SQLite compares it: booleans become 1/0 (as json_extract gives them), objects JSON. */
export function sqlValue(value: unknown): unknown {
  if (typeof value === 'boolean') return value ? 1 : 0;
  if (value === undefined) return null;
  if (typeof value === 'object' && value !== null) return JSON.stringify(value);
  return value;
}

/** The SQL expression of a field: its column when indexed, else json_extract of the document. */
export function fieldExpr(shape: TableShape, path: string, alias = ''): string {
  if (path === '_id') return `${alias}id`;
  const column = shape.columns.get(path);
  if (column) return `${alias}${column}`;
  return `json_extract(${alias}doc, '${jsonPath(path)}')`;
}

const isStructured = (v: unknown): boolean => typeof v === 'object' && v !== null && !(v instanceof RegExp);

/**
 * How a condition on an indexed array field is asked: `in` reads the matching ids from its
 * multikey table (few matches: read them all, then sort); `exists` tests each row the query
 * walks (many matches: walk a sort index and stop at the limit).
 */
export type Membership = 'in' | 'exists';

/**
 * Compiles a filter into a SQL condition, pushing its parameters onto `params`. The semantics are
 * those of ports/document-store.ts; json-documents.ts `matches` is the same in JS.
 */
export function compileFilter(shape: TableShape, filter: JsonObject, params: unknown[], alias = '', membership: Membership = 'in'): string {
  const parts: string[] = [];
  for (const [key, condition] of Object.entries(filter)) {
    if (key === '$and' || key === '$or') {
      const subs = (condition as JsonObject[]).map((sub) => compileFilter(shape, sub, params, alias, membership));
      parts.push(subs.length === 0 ? (key === '$and' ? '1' : '0') : `(${subs.join(key === '$and' ? ' AND ' : ' OR ')})`);
    } else if (key.startsWith('$')) {
      throw new Error(`unsupported filter operator ${key}`);
    } else {
      parts.push(compileField(shape, key, condition, params, alias, membership));
    }
  }
  return parts.length === 0 ? '1' : parts.join(' AND ');
}

function compileField(shape: TableShape, path: string, condition: unknown, params: unknown[], alias: string, membership: Membership): string {
  const top = path.split('.')[0]!;
  if (shape.arrays.has(top) && top !== path) throw new Error(`filters cannot reach into the array field ${top} (${path})`);
  const isArray = shape.arrays.has(path);
  const ops: [string, unknown][] = condition instanceof RegExp ? [['$regex', condition]] : isOperatorObject(condition) ? Object.entries(condition) : [['$eq', condition]];
  const options = isOperatorObject(condition) && typeof condition.$options === 'string' ? condition.$options : '';
  const parts: string[] = [];
  for (const [op, operand] of ops) {
    if (op === '$options') continue;
    parts.push(isArray ? arrayCondition(shape, path, op, operand, options, params, alias, membership) : scalarCondition(fieldExpr(shape, path, alias), path, op, operand, options, params, alias));
  }
  return parts.length === 1 ? parts[0]! : `(${parts.join(' AND ')})`;
}

function inList(expr: string, values: readonly unknown[], params: unknown[]): string {
  if (values.length <= 16) {
    params.push(...values.map(sqlValue));
    return `${expr} IN (${values.map(() => '?').join(', ')})`;
  }
  params.push(JSON.stringify(values.map(sqlValue)));
  return `${expr} IN (SELECT value FROM json_each(?))`;
}

function rangeGuard(expr: string, operand: unknown): string {
  if (typeof operand === 'string') return `typeof(${expr}) = 'text'`;
  if (typeof operand === 'number' || typeof operand === 'boolean') return `typeof(${expr}) IN ('integer', 'real')`;
  throw new Error(`range conditions take strings or numbers, not ${JSON.stringify(operand)}`);
}

const RANGE: Record<string, string> = { $gt: '>', $gte: '>=', $lt: '<', $lte: '<=' };

function scalarCondition(expr: string, path: string, op: string, operand: unknown, options: string, params: unknown[], alias: string): string {
  switch (op) {
    case '$eq':
      if (operand === null) return `${expr} IS NULL`;
      if (isStructured(operand)) {
        params.push(JSON.stringify(operand));
        return `${expr} = json(?)`;
      }
      params.push(sqlValue(operand));
      return `${expr} = ?`;
    case '$ne':
      if (operand === null) return `${expr} IS NOT NULL`;
      if (isStructured(operand)) {
        params.push(JSON.stringify(operand));
        return `${expr} IS NOT json(?)`;
      }
      params.push(sqlValue(operand));
      return `${expr} IS NOT ?`;
    case '$gt':
    case '$gte':
    case '$lt':
    case '$lte':
      params.push(sqlValue(operand));
      return `(${expr} ${RANGE[op]} ? AND ${rangeGuard(expr, operand)})`;
    case '$in':
    case '$nin': {
      const values = operand as unknown[];
      const withNull = values.some((v) => v === null);
      const rest = values.filter((v) => v !== null);
      if (rest.some(isStructured)) throw new Error(`$in and $nin take scalars (${path})`);
      const some = rest.length > 0 ? inList(expr, rest, params) : '0';
      const any = withNull ? `(${some} OR ${expr} IS NULL)` : some;
      return op === '$in' ? any : withNull ? `NOT ${any}` : `(${expr} IS NULL OR NOT ${some})`;
    }
    case '$exists':
      return `json_type(${alias}doc, '${jsonPath(path)}') IS ${operand ? 'NOT NULL' : 'NULL'}`;
    case '$regex': {
      const source = operand instanceof RegExp ? operand.source : String(operand);
      const flags = options || (operand instanceof RegExp ? operand.flags : '');
      params.push(source, flags);
      return `castie_regexp(?, ?, ${expr})`;
    }
    default:
      throw new Error(`unsupported filter operator ${op}`);
  }
}

function arrayCondition(shape: TableShape, path: string, op: string, operand: unknown, options: string, params: unknown[], alias: string, membership: Membership): string {
  const whole = `json_extract(${alias}doc, '${jsonPath(path)}')`;
  const side = shape.multikey.get(path);
  const each = (test: (value: string) => string): string => `EXISTS (SELECT 1 FROM json_each(${alias}doc, '${jsonPath(path)}') WHERE ${test('value')})`;
  const member = (values: readonly unknown[]): string => {
    // The row's id named with its table: inside the subquery a bare `id` is the multikey table's own.
    if (side && membership === 'exists') return `EXISTS (SELECT 1 FROM ${side} s WHERE ${inList('s.k', values, params)} AND s.id = ${alias || `${shape.q}.`}id)`;
    if (side) return `${alias}id IN (SELECT id FROM ${side} WHERE ${inList('k', values, params)})`;
    return each((v) => inList(v, values, params));
  };
  switch (op) {
    case '$eq':
      if (operand === null) return `${whole} IS NULL`;
      if (Array.isArray(operand)) {
        params.push(JSON.stringify(operand));
        return `${whole} = json(?)`;
      }
      return member([operand]);
    case '$ne':
      return operand === null ? `${whole} IS NOT NULL` : `NOT ${member([operand])}`;
    case '$in':
    case '$nin': {
      const values = (operand as unknown[]).filter((v) => v !== null);
      const withNull = values.length < (operand as unknown[]).length;
      const some = values.length > 0 ? member(values) : '0';
      const any = withNull ? `(${some} OR ${whole} IS NULL)` : some;
      return op === '$in' ? any : `NOT ${any}`;
    }
    case '$exists':
      return `json_type(${alias}doc, '${jsonPath(path)}') IS ${operand ? 'NOT NULL' : 'NULL'}`;
    case '$gt':
    case '$gte':
    case '$lt':
    case '$lte':
      return each((v) => {
        params.push(sqlValue(operand));
        return `(${v} ${RANGE[op]} ? AND ${rangeGuard(v, operand)})`;
      });
    case '$regex': {
      const source = operand instanceof RegExp ? operand.source : String(operand);
      const flags = options || (operand instanceof RegExp ? operand.flags : '');
      return each((v) => {
        params.push(source, flags);
        return `castie_regexp(?, ?, ${v})`;
      });
    }
    default:
      throw new Error(`unsupported filter operator ${op}`);
  }
}

/** `ORDER BY` of a sort, or '' without one. */
export function compileSort(shape: TableShape, sort: Record<string, 1 | -1> | undefined, alias = ''): string {
  const keys = Object.entries(sort ?? {});
  if (keys.length === 0) return '';
  for (const [path] of keys) if (shape.arrays.has(path.split('.')[0]!)) throw new Error(`cannot sort on the array field ${path}`);
  return ` ORDER BY ${keys.map(([path, dir]) => `${fieldExpr(shape, path, alias)} ${dir === -1 ? 'DESC' : 'ASC'}`).join(', ')}`;
}
